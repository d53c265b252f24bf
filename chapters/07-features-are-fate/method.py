# %% [markdown]
# # The method: what a pretrained deep linear network can transfer
#
# When does starting from a pretrained network beat training from scratch on a small target
# set? Tahir, Ganguli and Rotskoff {cite}`tahir2025features` answer it in a model where every
# risk has a formula: a deep linear network, Gaussian inputs, a linear target and label noise.
#
# > We adopt a *feature-centric* viewpoint on transfer learning and establish a number of
# > theoretical results that demonstrate that when the target task is well represented by the
# > feature space of the pre-trained model, transfer learning outperforms training from
# > scratch. (Tahir, Ganguli & Rotskoff, 2025, abstract)
#
# This notebook builds the argument in four steps you can run: pretraining leaves one direction
# in the hidden layer; in two dimensions you can *see* where scratch training and fine-tuning
# end; a conserved quantity of gradient flow turns the network into a vector that moves in a
# known way; and the closed forms follow. The paper's experiments are in
# [the reproduction](reproduction.ipynb). Equation and theorem numbers follow arXiv
# 2410.08194v2. They are not checked: the paper's stored opening ends before its first
# equation, and the authors' code, whose formulas give ours, numbers none of them.

# %% tags=["parameters", "hide-input"]
mode = "book"  # choices: quick, book, paper
seed = 0

# %% tags=["hide-input"]
import numpy as np

from icml25 import book
from icml25 import transfer_theory as tt

from _chapter import COLOURS

SIZES = {
    "quick": dict(d_pre=20, pre_steps=300, d_check=16, n_check=8, checks=3,
                  weight_steps=3000, d_ex=60, seeds_ex=4),
    "book": dict(d_pre=50, pre_steps=400, d_check=30, n_check=15, checks=6,
                 weight_steps=6000, d_ex=200, seeds_ex=32),
    "paper": dict(d_pre=500, pre_steps=800, d_check=100, n_check=50, checks=20,
                  weight_steps=20000, d_ex=1000, seeds_ex=64),
}
run = book.setup(mode=mode, seed=seed, sizes=SIZES)
size = run.size

# %% [markdown]
# ## The model
#
# ```{prf:definition} Source, target, learners, transferability
# :label: def-07-model
#
# Inputs $x\sim\mathcal N(0,I_d)$ and labels $y=\beta^\top x+\sigma\epsilon$. The source and
# target weights are unit vectors at angle $\theta$:
# $\beta_t=\cos\theta\,\beta_s+\sin\theta\,\beta_\perp$. A deep linear network
# $f(x)=x^\top W_1\cdots W_{L-1}w_L$ is pretrained on the source's population loss from a small
# initialisation, then meets $n=\gamma d$ target samples. Three learners:
#
# - **scratch**: the same network, trained from a small initialisation on the target samples;
# - **linear transfer**: freeze $W_1\cdots W_{L-1}$, fit the last layer by ridge regression;
# - **fine-tuning**: train every weight on the target samples, starting from the pretrained ones.
#
# The risk of an estimate $\hat\beta$ is $R=\|\hat\beta-\beta_t\|^2$ and the
# **transferability** of a learner is $\mathcal T=R_{\text{scratch}}-R_{\text{learner}}$:
# positive means the pretrained network helps.
# ```
#
# ## Pretraining keeps one direction
#
# Gradient flow on a two-layer network conserves the imbalance
# $D=W_1^\top W_1-w_2w_2^\top$ (its time derivative is $-w_2g^\top W_1-W_1^\top gw_2^\top$ for
# both terms). From a small initialisation $D\approx0$, so at the end $W_1^\top W_1=w_2w_2^\top$
# has rank one: the hidden layer holds the single direction $\beta_s$ with singular value 1,
# and every other direction keeps its initial size $\alpha$. The cell below pretrains
# {glue:text}`n_pre` networks of width $d=$ {glue:text}`d_pre` by plain gradient descent on the
# weights (`tt.deep_linear_gd`), from $\alpha=10^{-3}$.

# %%
tasks = tt.make_tasks(size.d_pre, 4, run.seed_of("pretraining tasks"))
start = tt.init_deep_linear(size.d_pre, 2, 1e-3, batch=4,
                            rng=run.rng("pretraining init"))
pretrained = tt.deep_linear_gd(start, tasks.beta_s, lr=0.2, steps=size.pre_steps)
sv_start = np.linalg.svd(start[0], compute_uv=False)
sv_end = np.linalg.svd(pretrained[0], compute_uv=False)
imbalance = np.linalg.norm(
    np.einsum("bji,bjk->bik", pretrained[0], pretrained[0])
    - pretrained[1][:, :, None] * pretrained[1][:, None, :], axis=(1, 2))
top_alignment = np.abs(np.einsum(
    "bd,bd->b", np.linalg.svd(pretrained[0])[0][:, :, 0], tasks.beta_s))
book.glue(n_pre=4, d_pre=size.d_pre, sv1=sv_end[:, 0].mean(), sv2=sv_end[:, 1].mean(),
          alignment=top_alignment.min(), imbalance=imbalance.max())

# %% tags=["remove-output"]
fig, ax = book.figure(height=2.8)
ranks = np.arange(1, size.d_pre + 1)
ax.semilogy(ranks, sv_start[0], "o", ms=3, color="0.6", label="at initialisation")
ax.semilogy(ranks, sv_end[0], "o", ms=3, color=COLOURS["source"],
            label="after pretraining")
ax.set_xlabel("rank of the singular value of $W_1$")
ax.set_ylabel("singular value")
ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5))
book.show_figure(fig, "fig_sparsification")

# %% [markdown]
# ```{glue:figure} fig_sparsification
# :alt: Singular values of the first layer on a log scale against their rank. At initialisation they spread between about 1e-5 and 2e-3. After pretraining the first one is 1 and all the others stay at their initial size, around 1e-3.
# :name: fig-07-sparsification
#
# **Pretraining from a small initialisation leaves one direction in the hidden layer.** The
# singular values of $W_1$ of one network before and after gradient descent on the source's
# population loss: one grows to 1, the rest keep their initial size.
# ```

# %% [markdown]
# Over the {glue:text}`n_pre` networks the top singular value is {glue:text}`sv1:.4f`, the
# next {glue:text}`sv2:.1e`, the top singular vector has $|\cos|\ge$
# {glue:text}`alignment:.6f` with $\beta_s$, and the imbalance $\|D\|_F$ is
# {glue:text}`imbalance:.1e` ({numref}`fig-07-sparsification`). This is the title's point:
# whatever the target asks for, linear transfer can only rescale $\beta_s$.

# %% tags=["nbval-check-output"]
book.claim("sparsification", float((sv_end[:, 1] / sv_end[:, 0]).max()))


# %% [markdown]
# ## Two dimensions, one sample: where the learners end
#
# With $d=2$ and a single target sample $x_1$, the data see one line, the row space
# $\operatorname{span}(x_1)$; the perpendicular line is the **null space**, where the loss is
# flat. Gradient descent moves $\hat\beta$ only along directions of the form $X^\top r$, inside
# the row space, and along $\hat\beta$ itself (the layers rescale together). So:
#
# - scratch training starts at (almost) 0 and ends at the point of the row line closest to the
#   origin, the **minimum-norm interpolator** $X^+y$;
# - fine-tuning starts at $\beta_s$ and keeps $\beta_s$'s null-space part, rescaled by a factor
#   $c$ (close to 1 without noise): it ends at $X^+y+c\,(I-P)\beta_s$.
#
# In the null space, scratch guesses 0 and fine-tuning guesses $\beta_s$. The guess $\beta_s$ is
# the better one exactly when $\|\beta_t-\beta_s\|<\|\beta_t\|=1$, i.e. $\theta<60^\circ$.
# The cell trains the weights of two-layer networks by gradient descent and records the path of
# $\hat\beta=W_1w_2$.

# %%
def paths(weights, cov, target, steps, every=5):
    """End-to-end vectors along weight-space gradient descent, every few steps."""
    out = [tt.end_to_end(weights)]
    for _ in range(steps // every):
        weights = tt.deep_linear_gd(weights, target, cov=cov, lr=0.05, steps=every)
        out.append(tt.end_to_end(weights))
    return np.array(out)


toy_rng = run.rng("toy scratch start")
x1 = np.array([[np.cos(1.2), np.sin(1.2)]]) * 1.3
beta_t2 = np.array([1.0, 0.0])
y1 = x1 @ beta_t2
cov2, target2 = x1.T @ x1, (x1.T @ y1)
toy = {}
for name, angle in (("40°", np.radians(40)), ("80°", np.radians(80))):
    beta_s2 = np.array([np.cos(angle), np.sin(angle)])
    # a balanced pretrained network whose end-to-end vector is beta_s2
    pre2 = [np.outer(beta_s2, [1.0, 0.0]), np.array([1.0, 0.0])]
    toy[name] = (beta_s2, paths(pre2, cov2, target2, 600))
scratch_start = tt.init_deep_linear(2, 2, 1e-2, rng=toy_rng)
toy["scratch"] = (None, paths(scratch_start, cov2, target2, 1500))
book.glue(toy_scratch_risk=float(((toy["scratch"][1][-1] - beta_t2) ** 2).sum()))
for name in ("40°", "80°"):
    end = toy[name][1][-1]
    book.glue(f"toy_ft_risk_{name[:2]}", float(((end - beta_t2) ** 2).sum()))

# %% tags=["remove-output"]
fig, axes = book.figure(2, height=3.6)
ax = axes[0]
row = x1[0] / np.linalg.norm(x1[0])
shift = y1[0] / np.linalg.norm(x1[0]) * row  # the interpolating line passes here
ax.plot(*np.array([shift - 2 * row[::-1] * [-1, 1], shift + 2 * row[::-1] * [-1, 1]]).T,
        color="0.6", lw=1, label="interpolating solutions")
circle = np.linspace(0, 2 * np.pi, 200)
ax.plot(1 + np.cos(circle), np.sin(circle), ":", color="0.4", lw=1,
        label=r"$\|\beta-\beta_t\|=1$")
ax.plot(*toy["scratch"][1].T, color=COLOURS["scratch"], label="scratch")
for name, style in (("40°", "-"), ("80°", "--")):
    beta_s2, path = toy[name]
    ax.plot(*path.T, style, color=COLOURS["finetune"],
            label=f"fine-tuning, θ = {name}")
    ax.plot(*beta_s2, "o", color=COLOURS["source"],
            label=r"sources $\beta_s$" if name == "40°" else None)
ax.plot(*beta_t2, "k*", ms=10, label=r"$\beta_t$")
ax.plot(0, 0, "k+", ms=8)
ax.set_aspect("equal")
ax.set_xlim(-0.6, 2.1)
ax.set_ylim(-1.1, 1.3)
ax.set_title("paths of $W_1w_2$ ($d=2$, one sample)")
ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=2, fontsize=8)
ax = axes[1]
theta_deg = np.linspace(0, 90, 181)
ax.axhline(tt.risk_scratch(0.5), color=COLOURS["scratch"], label="scratch, eq. (8)")
ft_risk = tt.risk_scratch(0.5) - tt.transfer_gain_finetune(0.5, np.radians(theta_deg))
ax.plot(theta_deg, ft_risk, color=COLOURS["finetune"], label="fine-tuning, eq. (15)")
ax.axvline(60, color="0.6", ls=":", lw=1)
ax.set_xlabel("angle θ (degrees)")
ax.set_ylabel(r"risk $\|\hat\beta-\beta_t\|^2$")
ax.set_title(r"$\gamma=n/d=0.5$, no noise")
ax.legend(loc="upper left")
book.show_figure(fig, "fig_toy")

# %% [markdown]
# ```{glue:figure} fig_toy
# :alt: Left, a plane with the target vector at (1, 0), a grey line of interpolating solutions, a dotted unit circle around the target, and three paths. The scratch path leaves the origin and ends where the line is closest to the origin. Two fine-tuning paths start at source vectors at 40 and 80 degrees and slide parallel to the row direction onto the line. Right, risk against the angle for gamma 0.5: scratch is flat at 0.5, fine-tuning rises from 0 and crosses it at 60 degrees.
# :name: fig-07-toy
#
# **Fine-tuning keeps the source's guess where the data are silent, and wins iff the source is
# within distance 1 of the target.** Left: paths of $\hat\beta=W_1w_2$ under gradient descent
# on the weights with one sample in $d=2$; all end on the line of interpolating solutions,
# scratch at the point nearest the origin, fine-tuning near its own start. Right: the
# proportional-limit risks at $\gamma=0.5$ cross at $\theta=60^\circ$.
# ```

# %% [markdown]
# In this draw scratch ends with risk {glue:text}`toy_scratch_risk:.3f`, fine-tuning from a
# source at $40^\circ$ with {glue:text}`toy_ft_risk_40:.3f` (its start is inside the dotted
# circle) and from $80^\circ$ with {glue:text}`toy_ft_risk_80:.3f` (outside).
#
# ## From weights to one vector: the end-to-end flow
#
# For a balanced network (small initialisation, or a pretrained one) with one output, gradient
# flow on the weights moves the end-to-end vector as {cite}`arora2018optimization`
#
# $$\dot\beta=-\|\beta\|^{2-2/L}\Big(g+(L-1)\,\hat\beta\hat\beta^\top g\Big),\qquad
# g=\Sigma\beta-b,\quad \Sigma=\tfrac1nX^\top X,\ b=\tfrac1nX^\top y .$$
#
# Two facts follow. The gradient $g$ lies in the row space, so the null-space part of $\beta$
# only rescales; and comparing the rates, it rescales as $\|\beta\|^{(L-1)/L}$. Interpolation
# fixes the row-space part to $X^+y$, so fine-tuning ends at $X^+y+c\,(I-P)\beta_s$ with
#
# $$c^4-a\,c^2-b=0\quad(L=2),\qquad a=\|(I-P)\beta_s\|^2\to1-\gamma,\quad
# b=\|X^+y\|^2\to\gamma+\frac{\sigma^2\gamma}{1-\gamma}.$$
#
# Without noise $a+b\to1$ and $c=1$, the paper's Theorem 3.9. With noise $c>1$: the row-space
# part is inflated by fitted noise and the balance inflates the null-space part with it.
# `tt.finetune_endpoint` computes this end point for finite $n$: `row` is $X^+y$, `null0`
# is $(I-P)\beta_s$, and `_balanced_norm` solves the balance equation for the final norm
# $t$, from which `c` follows.
#
# ```{literalinclude} /lib/icml25/transfer_theory/linear.py
# :pyobject: finetune_endpoint
# :caption: `icml25.transfer_theory.finetune_endpoint`: where fine-tuning ends
# :language: python
# ```
#
# `tt.gradient_flow` integrates the flow in the eigenbasis of $\Sigma$ at $O(d)$ per step,
# batched over whole grids, and imposes the conserved quantity after every step. The check
# below compares it, for {glue:text}`n_checks` data sets with label noise $\sigma=1$
# ($d=$ {glue:text}`d_check`, $n=$ {glue:text}`n_check`, $\theta=50^\circ$), with gradient
# descent on the weights at two step sizes and with the closed-form end point.

# %%
d, n = size.d_check, size.n_check
check_tasks = tt.make_tasks(d, size.checks, run.seed_of("check tasks"))
init_w = tt.init_deep_linear(d, 2, 1e-3, batch=size.checks, rng=run.rng("check init"))
pre_w = tt.deep_linear_gd(init_w, check_tasks.beta_s, lr=0.2, steps=400)
beta_pre = tt.end_to_end(pre_w)
data_rng = run.rng("check data")
X = data_rng.standard_normal((size.checks, n, d))
beta_t = check_tasks.target([np.radians(50)])[0]
noise = data_rng.standard_normal((size.checks, n))
y = np.einsum("snd,sd->sn", X, beta_t) + 1.0 * noise
cov, target = np.einsum("snd,sne->sde", X, X) / n, np.einsum("snd,sn->sd", X, y) / n


def risk(beta):
    return ((beta - beta_t) ** 2).sum(-1)


ends = {
    "weights, step 0.1": tt.end_to_end(tt.deep_linear_gd(
        pre_w, target, cov=cov, lr=0.1, steps=size.weight_steps // 5)),
    "weights, step 0.01": tt.end_to_end(tt.deep_linear_gd(
        pre_w, target, cov=cov, lr=0.01, steps=size.weight_steps)),
    "end-to-end flow": tt.gradient_flow(X, y, beta_pre, tol=1e-10).beta,
    "closed-form end point": tt.finetune_endpoint(X, y, beta_pre),
    "c = 1 (eq. 15)": tt.min_norm_interpolator(X, y) + (
        beta_pre - np.einsum("sdn,snk,sk->sd", np.linalg.pinv(X), X, beta_pre)),
}
flow_gap = float(np.abs(risk(ends["weights, step 0.01"])
                        - risk(ends["end-to-end flow"])).max())
book.glue(n_checks=size.checks, d_check=d, n_check=n, flow_gap=flow_gap,
          big_step_gap=float(np.abs(risk(ends["weights, step 0.1"])
                                    - risk(ends["end-to-end flow"])).max()),
          c1_gap=float(np.abs(risk(ends["c = 1 (eq. 15)"])
                              - risk(ends["end-to-end flow"])).max()))

# %% tags=["nbval-check-output"]
print("fine-tuning risk per data set")
for name, beta in ends.items():
    print(f"{name:22s} " + " ".join(f"{r:6.3f}" for r in risk(beta)))
book.claim("flow-equals-weights", flow_gap)

# %% [markdown]
# Small-step gradient descent on the weights and the end-to-end flow agree to
# {glue:text}`flow_gap:.4f` in risk; with step 0.1 the weights drift off the balance and the gap
# is {glue:text}`big_step_gap:.3f`. Setting $c=1$, as eq. (15) does, misses by up to
# {glue:text}`c1_gap:.2f` at this noise level: the reproduction measures where that moves the
# break-even angle.
#
# ## The closed forms
#
# In the proportional limit $n,d\to\infty$ with $n/d=\gamma$ (unit $\beta$'s):
#
# | learner | risk | |
# |---|---|---|
# | scratch | $(1-\gamma)+\dfrac{\gamma\sigma^2}{1-\gamma}$ for $\gamma<1$; $\dfrac{\sigma^2}{\gamma-1}$ for $\gamma>1$ | eq. (8) |
# | linear transfer | $\sin^2\theta+\dfrac{\sigma^2+\sin^2\theta}{n-2}$ (exact mean at $n$ samples) | eq. (10) |
# | linear transfer, ridge $\lambda$ | $1-\dfrac{1+2\lambda}{(1+\lambda)^2}\cos^2\theta$ | eq. (13) |
# | fine-tuning | $R_{sc}-(1-\gamma)(2c\cos\theta-c^2)$ for $\gamma<1$; $R_{sc}$ beyond | eq. (15), $c=1$ at $\sigma=0$ |
#
# Scratch training is double descent: the part of $\beta_t$ the data cannot see, plus noise
# amplified by the smallest singular values of $X$, infinite at $\gamma=1$. Linear transfer
# has a floor $\sin^2\theta$ that no amount of data lowers: the pretrained features hold only
# $\beta_s$. Their difference is the transferability of linear transfer (eq. 11); fine-tuning's
# depends on $\theta$ only through $2c\cos\theta-c^2$, whose sign flips at
# $\theta^*=\arccos(c/2)$: $60^\circ$ without noise. In the code, `gain` in
# `transfer_gain_finetune` is $\mathcal T_{ft}=(1-\gamma)(2c\cos\theta-c^2)$, the scratch
# risk minus the table's last row, and `finetune_scale` sets $a=1-\gamma$ and $b=\gamma+\sigma^2\gamma/(1-\gamma)$ and solves
# $c^4-ac^2-b=0$ (for depth $L$, its generalisation) by bisection.
#
# :::{dropdown} The code: fine-tuning's transferability and the balance factor $c$
# :open:
# ```{literalinclude} /lib/icml25/transfer_theory/closed_forms.py
# :pyobject: transfer_gain_finetune
# :caption: `icml25.transfer_theory.transfer_gain_finetune`: eq. (15) with $c$
# :language: python
# ```
#
# ```{literalinclude} /lib/icml25/transfer_theory/closed_forms.py
# :pyobject: finetune_scale
# :caption: `icml25.transfer_theory.finetune_scale`: the balance factor $c$
# :language: python
# ```
# :::

# %% tags=["remove-output"]
fig, axes = book.figure(2, height=3.0)
g = np.linspace(0.02, 2.5, 600)
g = g[np.abs(g - 1) > 4e-3]
ax = axes[0]
for sigma, style in ((0.0, "-"), (0.2, "--")):
    ax.plot(g, tt.risk_scratch(g, sigma), style, color=COLOURS["scratch"],
            label=f"scratch, σ={sigma}")
for k, th in enumerate(np.array([1, 2, 3]) * np.pi / 8):
    ax.axhline(np.sin(th) ** 2, color=COLOURS["linear"], lw=1.2, ls=":",
               label="transfer floor $\\sin^2\\theta$" if k == 0 else None)
    ax.text(2.52, np.sin(th) ** 2, f"{k + 1}π/8", va="center", fontsize=8)
ax.set_ylim(0, 1.6)
ax.set_xlabel(r"samples per dimension $\gamma=n/d$")
ax.set_ylabel("risk")
ax.legend(loc="upper right", bbox_to_anchor=(1.03, 1.02), fontsize=8)
ax = axes[1]
theta_deg = np.linspace(0, 90, 181)
for sigma, style in ((0.0, "-"), (0.5, "--"), (1.0, ":")):
    gain = tt.transfer_gain_finetune(0.5, np.radians(theta_deg), sigma) / 0.5
    ax.plot(theta_deg, gain, style, color=COLOURS["finetune"], label=f"σ = {sigma}")
ax.axhline(0, color="0.6", lw=1)
ax.set_xlabel("angle θ (degrees)")
ax.set_ylabel(r"$\mathcal{T}_{ft}/(1-\gamma)$ at $\gamma=0.5$")
ax.legend(loc="upper right")
book.show_figure(fig, "fig_closed_forms")
book.glue(theta_star_1=np.degrees(tt.break_even_angle(0.5, 1.0)),
          c_sigma_1=tt.finetune_scale(0.5, 1.0))


# %% [markdown]
# ```{glue:figure} fig_closed_forms
# :alt: Left, scratch risk against gamma from 0 to 2.5, falling from 1 to 0 at gamma 1 without noise and with a spike at gamma 1 with noise 0.2; three dotted horizontal lines mark the linear-transfer floors for theta pi/8, pi/4, 3pi/8. Right, fine-tuning gain divided by (1 - gamma) against the angle for noise 0, 0.5 and 1: decreasing curves crossing zero at 60 degrees without noise and earlier with more noise.
# :name: fig-07-closed-forms
#
# **Transfer pays when scratch training is worse than the transfer floor; fine-tuning's
# break-even angle is $60^\circ$ without noise and smaller with it.** Left: eq. (8) against
# the floors $\sin^2\theta$ of eq. (10); $\mathcal T_{lt}$ is the vertical gap. Right: eq.
# (15)'s gain per unit of $1-\gamma$, with the balance factor $c$ for $\sigma>0$.
# ```

# %% [markdown]
# At $\gamma=0.5$ and $\sigma=1$ the balance gives $c=$ {glue:text}`c_sigma_1:.3f` and a
# break-even angle of {glue:text}`theta_star_1:.1f`° instead of 60°
# ({numref}`fig-07-closed-forms`, right). The reproduction simulates all of this on grids of
# $(\gamma,\theta,\sigma)$.
#
# ## Exercises
#
# ```{exercise} Ridge cannot rescue linear transfer
# :label: ex-07-ridge
#
# **Level:** easy · **Time:** about 15 minutes.
#
# Eq. (13) says a ridge penalty on the read-out only raises the risk. At $\theta=\pi/4$,
# simulate linear transfer with `tt.linear_transfer` on the feature $\beta_s$ for
# $\lambda\in\{0,0.1,0.3,0.5\}$, at $n=2000$ ($\sigma=0.2$) and then at $n=10$ with label
# noise $\sigma=1.5$.
# Does a small $\lambda$ ever help?
# ```
#
# ```{solution-start} ex-07-ridge
# :class: dropdown
# ```
#
# With $n=2000$ the estimate of the one coefficient has no variance left to trade, and the risk
# follows eq. (13). With ten noisy samples it has: the variance term
# $(\sigma^2+\sin^2\theta)/(n-2)$ is large, and shrinking the coefficient lowers it more than it
# adds bias.

# %%
def ridge_curve(n, sigma, lams, reps=400, d=20):
    ex_tasks = tt.make_tasks(d, reps, run.seed_of("ridge exercise tasks"))
    ex_rng = run.rng(f"ridge exercise data, n = {n}")
    Xr = ex_rng.standard_normal((reps, n, d))
    bt = ex_tasks.target([np.pi / 4])[0]
    yr = np.einsum("snd,sd->sn", Xr, bt) + sigma * ex_rng.standard_normal((reps, n))
    out = []
    for lam in lams:
        beta, _ = tt.linear_transfer(Xr, yr, ex_tasks.beta_s[..., None], lam)
        out.append(((beta - bt) ** 2).sum(-1).mean())
    return np.array(out)


lams = np.array([0.0, 0.1, 0.3, 0.5])
large_n = ridge_curve(2000, 0.2, lams, reps=40)
small_n = ridge_curve(10, 1.5, lams)
print("lambda           " + "  ".join(f"{v:6.2f}" for v in lams))
print("eq. (13)         " + "  ".join(f"{v:6.4f}" for v in tt.risk_linear_transfer(
    np.pi / 4, lams)))
print("n = 2000, σ=0.2  " + "  ".join(f"{v:6.4f}" for v in large_n))
print("n = 10,   σ=1.5  " + "  ".join(f"{v:6.4f}" for v in small_n))
book.glue(ex_ridge_small_0=small_n[0], ex_ridge_small_best=small_n.min())

# %% [markdown]
# At $n=10$ the risk falls from {glue:text}`ex_ridge_small_0:.2f` at $\lambda=0$ to
# {glue:text}`ex_ridge_small_best:.2f`: eq. (13) is a statement about the limit, where ridge
# only shrinks a coefficient that is already exact.
#
# ```{solution-end}
# ```
#
# ```{exercise} How much noise does it take to move the break-even angle?
# :label: ex-07-break-even
#
# **Level:** medium · **Time:** about 20 minutes.
#
# Using `tt.break_even_angle`, find for $\gamma=0.5$ the noise level $\sigma$ at which
# fine-tuning's break-even angle falls to $45^\circ$. Then check it with a simulation:
# `tt.simulate_transfer` at that $\sigma$, $\theta\in\{40^\circ,45^\circ,50^\circ\}$.
# ```
#
# ```{solution-start} ex-07-break-even
# :class: dropdown
# ```
#
# $\theta^*=45^\circ$ means $c=2\cos45^\circ=\sqrt2$, so $c^4-ac^2-b=4-2a-b=0$ with
# $a=1-\gamma$ and $b=\gamma+\sigma^2\gamma/(1-\gamma)$: at $\gamma=0.5$, $b=3$ and
# $\sigma^2=5/2$. `tt.break_even_angle` at that noise returns $45^\circ$; the simulation
# compares the gain around $45^\circ$ with eq. (15) corrected by $c$.

# %%
gamma_45, c_45 = 0.5, 2 * np.cos(np.pi / 4)
b_45 = c_45**4 - (1 - gamma_45) * c_45**2
sigma_45 = np.sqrt((b_45 - gamma_45) * (1 - gamma_45) / gamma_45)
angle_check = np.degrees(tt.break_even_angle(0.5, sigma_45))
print(f"break-even angle at that noise: {angle_check:.4f}°")
angles_45 = np.radians([40, 45, 50])
check = tt.simulate_transfer(size.d_ex, [0.5], angles_45, [sigma_45],
                             seeds=size.seeds_ex, seed=run.seed_of("45-degree check"))
gains = check.gain("finetune")[0, 0]
print(f"sigma for a 45° break-even: {sigma_45:.4f} (sqrt(5/2) = {np.sqrt(2.5):.4f})")
print("angle   simulated gain (± 1 s.e.)   eq. (15) with c")
theory_45 = tt.transfer_gain_finetune(0.5, angles_45, sigma_45)
for a, g, th in zip((40, 45, 50), gains, theory_45):
    print(f"{a:4d}°   {g.mean():+.3f} ± {g.std(ddof=1) / np.sqrt(g.size):.3f}"
          f"              {th:+.3f}")
book.glue(sigma_45=sigma_45, ex_d=size.d_ex)

# %% [markdown]
# $\sigma=$ {glue:text}`sigma_45:.4f`: a noise variance two and a half times the signal's.
# At such noise the simulated gain carries a finite-size bias of order $1/d$ (here
# $d=$ {glue:text}`ex_d`; the correction $c$ is a nonlinear function of the noisy
# $\|X^+y\|^2$), so compare its sign change, not its third decimal.
#
# ```{solution-end}
# ```

# %%
book.finish()
