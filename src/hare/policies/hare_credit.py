"""The credit rules of HARE's synthesize mode (:mod:`hare.policies.hare`, the config's ``credit``): the output ``z`` is
novel (no pool item), and the rule decides which clusters' ``Sigma_{h,j}`` and ``b_{h,j}`` the reward is credited to
(``Sigma_{h,j} += w_{h,j} q_h q_h^T``, ``b_{h,j} += w_{h,j} q_h y``); with ``M_{h,j} = sum_{n in j} A_{h,n}`` the
attention mass of cluster ``j`` in head ``h`` (:meth:`SynthesisCredit.credit_weights`):

  - ``dominant`` (default): ``w_{h,j} = 1[j = argmax_j' M_{h,j'}]``;
  - ``attention_weighted``: ``w_{h,j} = M_{h,j}`` (``covariance_update: attention_weighted``'s update);
  - ``nearest_item``: ``w_{h,j} = 1[j = c(n*)]`` in every head, ``n* = argmin_n ||z - e_n||^2`` (first index on
    ties): the output is credited to the pool item it resembles;
  - ``gradient``: first-order attribution of the predicted reward to the attention weights. The policy's reward
    model scores ``z`` as ``r_hat(z) = g(<c, z>)``, ``c = mean_h W_K^{hT} q_h / sqrt(d_k)`` (the model of the
    user posterior, :mod:`hare.policies.hare`), and ``z = sum_{h,n} A_{h,n} o_{h,n}`` with
    ``o_{h,n} = W_O^{hT} W_V^h e_n`` (head ``h``'s rows of ``W_O``), so ``dr_hat/dA_{h,n} = g' <c, o_{h,n}>``.
    The attribution of cluster ``j`` in head ``h`` is ``a_{h,j} = sum_{n in j} A_{h,n} <c, o_{h,n}>`` (``g' > 0``
    is common to all and cancels), and ``w_{h,j} = max(a_{h,j}, 0) / sum_j' max(a_{h,j'}, 0)``; a head whose
    attributions are all ``<= 0`` falls back to ``w_{h,j} = M_{h,j}``. Since ``<c, z>`` is linear in ``A``,
    ``sum_{h,j} a_{h,j} = <c, z>`` (gradient times input is exact). With identity values (``o_{h,n} = e_n / H``)
    ``<c, o_{h,n}> = s_bar_n / H`` with ``s_bar_n = mean_g s_{g,n}`` the item's predicted logit, so ``a_{h,j}`` is
    the attention-weighted predicted logit of the cluster's items. The attribution goes through the policy's model
    of the reward of ``z``, not through a decoder: when ``z`` is decoded to text, the text's reward is credited as
    if it were ``z``'s;
  - ``none``: ``w = 0``: ``Sigma`` and ``b`` stay as the warm start left them (the control).

The warm start's logged pulls go through the select-mode update (``covariance_update``), whatever the credit
rule. ``covariance_update: attention_weighted`` with the default ``credit`` keeps weighting the synthesize rounds by
attention mass, as it did before the credit rules (:func:`synthesis_credit`). The credit rule decides ``Sigma``
and ``b`` only: the LNUCB-TA cluster statistics credit the cluster of largest head-mean mass, the user posterior
and the projection step use ``z``, under every rule.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from hare.model.attention import AttentionOutput
from hare.policies.base import PolicyConfig

CREDITS = ("dominant", "attention_weighted", "nearest_item", "gradient", "none")


def synthesis_credit(config: PolicyConfig) -> str:
    """The credit rule of synthesize rounds (:data:`CREDITS`): ``config.credit``, except that
    ``covariance_update: attention_weighted`` with the default ``credit`` keeps its attention-weighted update of
    synthesize rounds (the behaviour before the credit rules)."""
    if config.credit == "dominant" and config.covariance_update == "attention_weighted":
        return "attention_weighted"
    return config.credit


def check_credit(config: PolicyConfig) -> None:
    """``credit`` is synthesize mode's (select mode credits the pulled item's cluster), and a rule other than the
    default or the attention-weighted one needs ``covariance_update: dominant`` (the attention-weighted update already
    weights synthesize rounds). Refused with ``config.require`` (one line naming the field)."""
    config.require(
        config.mode == "synthesize" or config.credit == "dominant",
        "credit",
        "credit rules are synthesize mode's (select mode credits the pulled item's cluster)",
    )
    config.require(
        config.covariance_update == "dominant" or config.credit in ("dominant", "attention_weighted"),
        "credit",
        "covariance_update: attention_weighted already weights synthesize rounds by attention mass; "
        "set covariance_update: dominant with another credit rule",
    )


class SynthesisCredit:
    """The credit rules as :class:`hare.policies.hare.HARE`'s methods (it holds ``config``, ``attention``,
    ``projections``, ``clusters``, ``credit_items`` and ``credit_outputs``)."""

    def _item_outputs(self) -> torch.Tensor:
        """``o_{h,n} = W_O^{hT} v_{h,n}``, the output of item ``n`` through head ``h`` (``z = sum_{h,n} A_{h,n}
        o_{h,n}``), as ``(d_out, H N)`` (column ``h N + n``)."""
        values, output = self.attention.values, self.attention.output  # (H, N, d_v), (H d_v, d_out)
        outputs = torch.einsum("hnv,hvd->hnd", values, output.view(self.n_heads, values.shape[-1], -1))
        return outputs.reshape(-1, outputs.shape[-1]).T.contiguous()

    def credited_clusters(
        self, out: AttentionOutput, mass: torch.Tensor, synthesis: torch.Tensor
    ) -> tuple[torch.Tensor | None, torch.Tensor | None]:
        """The credit rule of synthesize mode (module docstring; :func:`synthesis_credit`) for the round's attention
        ``out``, its cluster masses ``M`` ``(n_runs, H, C)`` and outputs ``z`` ``(n_runs, d_out)``: ``(chosen, None)``
        with ``chosen`` ``(n_runs, H)`` the one credited cluster of each head (``dominant``, ``nearest_item``),
        ``(None, w)`` with ``w`` ``(n_runs, H, C)`` the weights of every cluster (``attention_weighted``,
        ``gradient``), or ``(None, None)`` (``none``: nothing moves). Batched over runs, heads and clusters;
        products are taken per run (no GEMM over the run dimension), so runs are independent."""
        rule = synthesis_credit(self.config)
        if rule == "dominant":
            return mass.argmax(-1), None
        if rule == "attention_weighted":
            return None, mass
        if rule == "none":
            return None, None
        if rule == "nearest_item":
            items = self.credit_items  # (N, d_e)
            z = synthesis.to(torch.float64)
            # ||z - e_n||^2 - ||z||^2 = ||e_n||^2 - 2 <z, e_n>: one (1, d) @ (d, N) product per run.
            inner = torch.bmm(z[:, None, :], items.T.expand(z.shape[0], -1, -1)).squeeze(1)  # (n_runs, N)
            nearest = ((items * items).sum(-1)[None, :] - 2.0 * inner).argmin(-1)  # (n_runs,)
            return self.clusters[nearest][:, None].expand(-1, self.n_heads), None
        # gradient: a_{h,j} = sum_{n in j} A_{h,n} <c, o_{h,n}>, c = mean_h W_K^{hT} q_h / sqrt(d_k).
        scale = 1.0 / (self.n_heads * math.sqrt(self.key_dim))
        c = (self.projections.key[None] * out.queries[..., None]).sum((1, 2)) * scale  # (n_runs, d_e)
        outputs = self.credit_outputs  # (d_out, H N)
        slopes = torch.bmm(c[:, None, :], outputs.expand(c.shape[0], -1, -1)).view(out.weights.shape)  # (n_runs, H, N)
        attribution = self.attention.cluster_mass(out.weights * slopes).clamp_min(0.0)  # (n_runs, H, C)
        total = attribution.sum(-1, keepdim=True)
        return None, torch.where(total > 0, attribution / total.clamp_min(torch.finfo(total.dtype).tiny), mass)

    def credit_weights(self, out: AttentionOutput, synthesis: torch.Tensor) -> torch.Tensor:
        """The credit rule's weights ``w_{h,j}`` of every cluster, ``(n_runs, H, C)`` (one-hot for ``dominant`` and
        ``nearest_item``, zero for ``none``): what :meth:`update_synthesis` adds ``w_{h,j} q_h q_h^T`` and
        ``w_{h,j} q_h y`` with."""
        chosen, weights = self.credited_clusters(out, self.attention.cluster_mass(out.weights), synthesis)
        if weights is not None:
            return weights
        if chosen is not None:
            return F.one_hot(chosen, self.n_clusters).to(torch.float64)
        return torch.zeros_like(out.bonuses)

    # -- shared learning step ---------------------------------------------------------------
