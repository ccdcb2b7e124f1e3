"""The steps of the informal sources that do not follow, or that need an assumption they do not state (paper,
sec:seed-issues): the source notes on HARE and its three-term regret decomposition, and LNUCB-TA (Khosravi et al.,
2025). Keys are the paper's ``\\seedissue{key}`` references: ``seed000_*`` the notes' theorem on heads, ``seed001_*``
their decomposition, ``seed002_*`` LNUCB-TA's Theorem 1; the bounds they annotate are :mod:`hare.theory.bounds` and
:mod:`hare.theory.baseline_bounds`."""

from __future__ import annotations

SEED_ISSUES: dict[str, str] = {
    "seed000_oful_rate": (
        "The source notes quote the Abbasi-Yadkori et al. (2011) bound as O(d sqrt(T log T)) (paper, after eq:oful). "
        "Their Theorem 3 gives R_T <= sqrt(8 T beta_T^2 d log(1 + T L^2/(lam d))) with "
        "beta_T = Theta(sigma sqrt(d log T)), i.e. d sqrt(T) log T: the confidence radius and the "
        "elliptical potential each contribute a sqrt(log T). The limit of the bound over "
        "d sqrt(T) log T is 2 sqrt(2) sigma, while over d sqrt(T log T) it diverges "
        "(asymptotic_ratio). The notes' rate is sqrt(log T) too optimistic."
    ),
    "seed000_alpha_factor_underived": (
        "The theorem of the source notes states R(T) = O(d sqrt(T log T) sqrt(H) (1 + alpha^2/d_k)), and "
        "step 5 of its proof sketch only says the (1 + alpha^2/d_k) factor is 'the cost of uncertainty injection'. "
        "Nothing in the sketch produces it: in an OFUL analysis the exploration weight enters the "
        "per-round regret linearly (r_t <= 2 alpha U_t once alpha is at least the confidence "
        "radius), not as alpha^2/d_k, and if alpha is below the radius optimism fails and no "
        "sublinear bound follows. The factor is kept in hare_multihead as the notes' claim only."
    ),
    "seed000_sqrt_h_underived": (
        "Step 4 of the notes' proof sketch attributes a sqrt(H) factor to 'combining H independent heads'. One "
        "action is taken per round whatever the number of heads, so the regret is not a sum of H "
        "per-head regrets (which would give H, not sqrt(H)); a sqrt(H) would need a "
        "Cauchy-Schwarz over heads of the per-head widths, with the decision rule averaging the "
        "heads' bonuses and each head's confidence set holding simultaneously (log(H/delta)). "
        "The sketch does neither; the factor is a claim."
    ),
    "seed001_step2_reduction": (
        "Step 2 calls the cluster rule j_t = argmax_j [s_bar_{t,j} + alpha U_{t,j}] an instance of "
        "OFUL. OFUL needs the index to be <q_t, theta_hat_j> + beta_t ||q_t||_{Sigma_j^{-1}} with "
        "theta_hat_j the ridge estimate fitted to the rewards observed for cluster j and beta_t "
        "at least the confidence radius of Theorem 2. The mean attention score s_bar is fitted "
        "offline (or fixed), not a ridge estimate of cluster reward, and alpha is a free constant. "
        "The reduction therefore needs the extra assumptions that the cluster mean reward is "
        "linear in q_t, that s_bar is (or is replaced by) the online ridge estimate, and that "
        "alpha >= beta_T. 'Applied independently to each of C clusters' also needs a union bound, "
        "so the radius carries log(C/delta) (hare_explore_oful)."
    ),
    "seed001_step3_potential": (
        "Step 3 cites Theorem 2 of Abbasi-Yadkori et al., which is the confidence ellipsoid; the sum "
        "of widths is bounded by the elliptical potential (their Lemma 11) and Cauchy-Schwarz in t: "
        "sum_{t: j_t=j} min(1, U_{t,j}) <= sqrt(T_j sum min(1, U^2)) <= "
        "sqrt(T_j 2 d_k log(1 + T_j B_x^2/(lam d_k))). The lemma holds for widths capped at 1; "
        "uncapped widths obey it only when lam >= max(1, B_x^2) (then U^2 <= B_x^2/lam <= 1). The "
        "bound is deterministic, so the delta inside the notes' log((1 + T_j B_x^2)/delta) does "
        "not belong there, the factor 2 and lam are missing, and the '1 + T_j B_x^2' is the "
        "lam = 1, d_k = 1 special case of 1 + T_j B_x^2/(lam d_k)."
    ),
    "seed001_step4_dk_power": (
        "Step 4 sums step 3 over clusters by Cauchy-Schwarz (sum_j sqrt(T_j) <= sqrt(C T), correct) "
        "and obtains alpha sqrt(C T d_k log(.)), which carries sqrt(d_k); the stated "
        "O(alpha d_k sqrt(C T log T)) silently upgrades it to d_k. A full d_k arises only when the "
        "width sum is multiplied by the confidence radius beta_T ~ sigma sqrt(d_k log T), i.e. "
        "when alpha is set to the radius, and then a second sqrt(log T) comes with it: the "
        "derived bound is 2 beta_T sqrt(2 C T d_k log(1 + T B_x^2/(lam d_k))) ~ "
        "2 sqrt(2) sigma d_k sqrt(C T) log T, not d_k sqrt(C T log T). With alpha a constant "
        "the notes' expression double counts (alpha and d_k); with alpha = beta_T it misses "
        "sqrt(log T)."
    ),
    "seed001_additive_term": (
        "The term 2 bound adds C d_k log T and writes the log as log(T lambda_max/delta); neither "
        "appears in steps 1-4. A burn-in term of that shape arises only if widths above 1 are "
        "handled separately (at most about d_k log(1 + T B_x^2/(lam d_k))/log 2 such rounds per "
        "cluster, each costing at most 2), and lambda_max, the largest eigenvalue of Sigma_j, is "
        "itself at most lam + T B_x^2, so it is not an independent parameter."
    ),
    "seed001_query_norm": (
        "The widths are U_{t,j} = ||q_t||_{Sigma_j^{-1}} with q_t = W_Qx x_t + W_Qu u_t, but the "
        "potential is stated with B_x, the bound on ||x_t||. The bound needed is "
        "||q_t|| <= ||W_Qx|| B_x + ||W_Qu|| B_u; every B_x in the explore bounds must be read as "
        "this query-norm bound (and it changes whenever the projections are retrained)."
    ),
    "seed001_term1_o1_claim": (
        "Term 1 says that for M >> p the approximation regret L_f T eps_attn becomes O(1). With "
        "eps_attn = c sqrt(p/M) it is c L_f T sqrt(p/M), which is O(1) only if M = Omega(p T^2). "
        "For it to be negligible against d_k sqrt(C T log T) one needs M = omega(p T/log T) "
        "(check_regime: ratio -> 0 for M = p T, a nonzero constant for M = p T/log T); for "
        "o(sqrt(T)) one needs M = omega(p T). The combined-bound regime 'M >> p T' is therefore "
        "sufficient, slightly stronger than necessary, whereas 'M >> p' is not."
    ),
    "seed001_user_concentration": (
        "The posterior bound ||u_hat_t - u*|| <= sigma sqrt(d_u log(t/delta)/lambda_min(Sigma_u^{-1}(t))) "
        "mixes scalings: with the precision Sigma_u^{-1} = I + sum x x^T/sigma^2 already divided by "
        "sigma^2, the extra sigma factor counts the noise twice (the self-normalised bound gives "
        "sigma/sqrt(lambda_min(lam I + sum x x^T)), which for lam = sigma^2 equals "
        "1/sqrt(lambda_min(precision)), up to the log factor). It "
        "also omits the prior-bias term sqrt(lam) B_u of Theorem 2, and a per-t confidence "
        "log(t/delta) holds for all t simultaneously only after a union bound (e.g. delta_t = "
        "6 delta/(pi^2 t^2), giving log(pi^2 t^2/(6 delta))). log(t/delta) > 0 at t = 1 needs "
        "delta < 1. hare_user keeps the notes' form and these corrections are for the paper."
    ),
    "seed001_user_rate": (
        "With lambda_min(t) >= kappa_u t + lam the user term is 2 L_u sigma sqrt(d_u T log T/kappa_u) "
        "to leading order: sqrt(d_u), not the stated d_u. It has the same order in T as the "
        "explore term d_k sqrt(C T log T), so it is dominated only in its constant (when "
        "d_u/kappa_u << d_k^2 C), not in T; the simplified constant keeps it. For M users the "
        "per-user design grows only on the rounds that user is active, so kappa_u is about 1/M "
        "of the per-round eigenvalue increment."
    ),
    "seed001_term1_lipschitz_premise": (
        "Term 1 bounds R_approx by L_f T eps_attn through assumption 2, |f(a, u) - f(a', u)| <= L_f ||a - a'||_1. "
        "For the attention-weighted reward f(a) = sum_n a_n mu(n) the tightest constant is half the reward range, "
        "(max_n mu - min_n mu)/2, because sum_n (a_n - a'_n) = 0. HARE in select mode plays the argmax item of the "
        "attention (within the argmax cluster), a discontinuous function of a: an arbitrarily small attention change "
        "can switch the played item, so the premise does not hold for the played reward and the bound is a "
        "hypothesis for select mode (measured in hare.theory.decomposition), a theorem only for the attention-weighted "
        "or synthesized reward."
    ),
    "seed001_explore_cluster_mean_gap": (
        "With oracle projections and true user states the cluster index mean_{n in j} s_n + alpha U_j ranks clusters "
        "by "
        "their mean item score, and the item played is the best of the chosen cluster. The cluster with the best mean "
        "need not contain the best item, so even with alpha = 0 and exact scores the regret of pi_W*,u* grows "
        "linearly in T whenever that happens with positive probability. Steps 1-4 bound only the cost of the bonus "
        "(exploration) and omit this selection gap, which R_explore = R(pi_W*,u*) measures together with it."
    ),
    "seed002_theorem1_rate": (
        "LNUCB-TA Theorem 1 states R_T <= b sigma sqrt(T(d log(.) + log(4/delta))) = "
        "O(sqrt(d T log T)). Its Proposition 2 gives sum_t regret_t^2 <= 8 beta_T d log(.) with "
        "beta_T = sigma^2(2 + 4 d log(.) + 8 log(4/delta)) itself of order d log T, so "
        "Cauchy-Schwarz yields sqrt(T 8 beta_T d log(.)) ~ d sqrt(T) log T, a factor "
        "sqrt(d log T) larger than the theorem. The proof also uses sum_{t<T} beta_t = beta_T "
        "(beta_t is increasing, so only beta_t <= beta_T holds), places sigma^2 differently in "
        "eq. 10 (T B^2 W^2/d) and eq. 11 (T B^2 W^2/(d sigma^2)), and leaves b unspecified, "
        "so the bound cannot be evaluated without choosing b."
    ),
}
