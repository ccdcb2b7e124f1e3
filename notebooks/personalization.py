# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Personalization (synthesize mode)
#
# From the personalization check on HARE-Text (`hare.experiments.studies.personalization`):
#
# * cross-user similarity: mean pairwise cosine similarity of the outputs for different
#   users on the same query, for the attention output $z$ and for the embedding of the
#   decoded text, with random projections, learned projections and RAG-cosine retrieval
#   (user-free, so 1 by construction); lower is more personal; for $z$ also over runs, with
#   random projections at std 0.02 against learned ones (mean and 95 % t interval);
# * held-out perplexity of the conditioned decoder against a separately trained
#   unconditioned decoder of the same size and training budget (mean and 95 % t interval);
# * attention entropy $H_t = -\sum_n a_{t,n} \log a_{t,n}$, averaged over windows of rounds,
#   against its maximum $\log N$;
# * online mean reward per window, of the decoded text and of $z$;
# * the decoded examples, printed.
#
# Reads only the JSON file the workflow passes in; never re-runs the check.

# %% tags=["parameters"]
runs: list = []
personalization_json: str = ""
figures: list = ["personalization.pdf"]

# %%
import json
from pathlib import Path

import numpy as np

from hare.report.names import display_name
from hare.report.style import apply_style, color_for, figure, save

apply_style()
if not personalization_json:
    raise ValueError("no personalization file given: set the 'personalization_json' parameter")
report = json.loads(Path(personalization_json).read_text())

# %%
kinds = ["random", "learned", "rag_cosine"]
kind_method = {"random": "hare_random", "learned": "hare", "rag_cosine": "rag_cosine"}
kind_names = {
    "random": "random $W$",
    "learned": "learned $W$",
    "rag_cosine": display_name("rag_cosine"),
}  # tick labels, two lines where long
outputs = {"divergence_z": "attention output $z$", "divergence_text": "decoded text"}
entropy = report["attention_entropy"]
window = int(entropy["window"])
online = report["online"]

fig, axes = figure(n_cols=3, height_in=2.0)
ax = axes[0, 0]
width = 0.38
for offset, (key, shown) in zip((-width / 2, width / 2), outputs.items(), strict=True):
    values = [report[key][kind] for kind in kinds]
    ax.bar(
        np.arange(len(kinds)) + offset,
        values,
        width,
        color=[color_for(kind_method[kind]) for kind in kinds],
        hatch="" if key == "divergence_z" else "///",
        edgecolor="white",
        linewidth=0.5,
        label=shown,
    )
ax.set_xticks(np.arange(len(kinds)), [kind_names[kind].replace(" ", "\n").replace("-", "-\n") for kind in kinds])
ax.set_ylabel("mean pairwise cosine")
ax.set_ylim(0, 1.3)
ax.set_title("cross-user similarity (lower: personal)")
legend = ax.legend(frameon=False, loc="upper left", ncol=2, handlelength=1.2, columnspacing=0.8, fontsize=6)
for handle in legend.legend_handles:
    handle.set_facecolor("#BBBBBB")

ax = axes[0, 1]
rounds = window * (np.arange(len(entropy["by_window"])) + 1)
ax.plot(rounds, entropy["by_window"], marker="o", markersize=3, color=color_for("hare"), label=display_name("hare"))
ax.axhline(entropy["max"], color="#7F7F7F", linestyle="--", linewidth=0.8, label=r"$\log N$ (uniform)")
ax.set_xlabel(f"round (end of window of {window})")
ax.set_ylabel("attention entropy (nats)")
ax.set_title("attention entropy")
ax.legend(frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.32), ncol=2, fontsize=6)

ax = axes[0, 2]
for key, shown, style in (
    ("text_mean_reward_by_window", "decoded text", "-"),
    ("z_mean_reward_by_window", "$z$", "--"),
):
    values = online[key]
    ax.plot(
        window * (np.arange(len(values)) + 1),
        values,
        style,
        marker="o",
        markersize=3,
        color=color_for("hare"),
        label=shown,
    )
ax.set_xlabel(f"round (end of window of {window})")
ax.set_ylabel("mean reward")
ax.set_title(f"online reward ({report['config']['n_runs']} runs)")
ax.legend(frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.32), ncol=2, fontsize=6)
save(fig, figures[0])

# %%
print({key: report[key] for key in outputs})
print("attention entropy by window:", entropy["by_window"], "max:", entropy["max"])
for key, value in report["similarity_z"].items():
    if isinstance(value, dict):
        print(
            f"similarity of z over runs, {key}: {value['estimate']:.6f} "
            f"[{value['ci_low']}, {value['ci_high']}] (n = {value['n']})"
        )
for key in ("conditioned", "unconditioned", "conditioned_minus_unconditioned", "conditioned_at_zero_condition"):
    value = report["perplexity"][key]
    print(
        f"held-out perplexity, {key}: {value['estimate']:.3f} "
        f"[{value['ci_low']}, {value['ci_high']}] (n = {value['n']})"
    )
print("unconditioned baseline:", report["perplexity"]["baseline"])
print("novelty:", report["novelty"])

# %% [markdown]
# ## Decoded examples
#
# The same query for every user: the decoder after pre-training and after the online
# reward-weighted fine-tuning of run 0, with each user's topic weights.

# %%
examples = report["examples"]
print("query:", examples["query"])
for user, (weights, pretrained, finetuned) in enumerate(
    zip(examples["user_topic_weights"], examples["pretrained"], examples["finetuned_run0"], strict=True)
):
    print(f"user {user}: topic weights {weights}")
    print(f"  pre-trained: {pretrained}")
    print(f"  fine-tuned:  {finetuned}")
