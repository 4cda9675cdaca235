"""Result folders written the way each tool's own saving code writes them (for the readers' tests).

Each writer names the upstream file and function it follows; the files were read to learn the
layouts (names, dtypes, shapes, what is recorded), not copied. The scores are simulated: a
member's score is shifted by ``shift`` (LiRA's logit-scaled confidence, or the probability of
the true label for Privacy Meter).

* LiRA reference code (``tensorflow/privacy`` ``research/mi_lira_2021``): ``train.py``
  (``get_data``, ``main``, ``TrainLoop.train``), ``inference.py`` (``main``), ``score.py``
  (``load_one``).
* Its PyTorch port (``orientino/lira-pytorch``): ``train.py`` (``run``), ``inference.py``
  (``run``), ``score.py`` (``load_one``); ``model.pt`` as ``torch.save`` lays out a zip archive
  (``torch/serialization.py`` ``_save``).
* Privacy Meter 2.0 (``privacytrustlab/ml_privacy_meter``): ``models/utils.py``
  (``split_dataset_for_training``, ``prepare_models``, ``load_models``), ``util.py``
  (``split_dataset_for_training_poisson``), ``get_signals.py`` (``get_model_signals``),
  ``audit.py`` (``sample_auditing_dataset``, ``get_audit_results``), ``run_mia.py``,
  ``run_audit_dp.py``, ``run_range_mia.py``.
* privacy-estimates (``microsoft/responsible-ai-toolbox-privacy``): ``privacy_estimates/
  utils.py`` (``AttackResults.to_json``, ``from_scores_threshold_and_labels``),
  ``privacy_curve_estimation.py`` (``compute_privacy_curve_lo_hi``, ``_compute_epsilon_max``),
  ``experiments/utils.py`` (``DPParameters.save_to_disk``), ``experiments/components/
  create_in_out_data_for_mi_challenge/mi_challenge.py`` (the challenge bits),
  ``experiments/attacks/lira/lira.py`` and ``attacks/rmia/rmia.py`` (the scores dataset),
  ``experiments/components/convert_dataset/convert.py`` (``convert_hfd_to_jsonl``).
"""

from __future__ import annotations

import json
import math
import pickle
import zipfile
from pathlib import Path

import numpy as np


# -- LiRA reference code ------------------------------------------------------------------------
def lira_keep(n: int, *, expid=None, num_experiments=None, seed=0, pkeep=0.5, only_subset=None):
    """``train.py`` ``get_data``: the keep mask of one model.

    With ``expid`` and ``num_experiments``: uniforms drawn under seed 0, ranked per example, so
    that every example is IN for ``pkeep * num_experiments`` models; with ``seed`` alone: one
    coin per example. ``only_subset`` sets ``keep[only_subset:]`` to False.
    """
    if num_experiments is not None:
        u = np.random.RandomState(0).uniform(0, 1, size=(num_experiments, n))
        keep = (u.argsort(0) < int(pkeep * num_experiments))[expid].astype(bool)
    else:
        keep = np.random.RandomState(seed).uniform(0, 1, size=n) <= pkeep
    if only_subset is not None:
        keep[only_subset:] = False
    return keep


def lira_scores_from_logits(logits: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """``score.py`` ``load_one``: log p(true) - log(sum of the other p), the 1-axis averaged."""
    z = logits - logits.max(axis=3, keepdims=True)
    p = np.exp(z).astype(np.float64)
    p /= p.sum(axis=3, keepdims=True)
    count = p.shape[0]
    y_true = p[np.arange(count), :, :, labels[:count]]
    p[np.arange(count), :, :, labels[:count]] = 0
    y_wrong = p.sum(axis=3)
    return np.log(y_true.mean(1) + 1e-45) - np.log(y_wrong.mean(1) + 1e-45)


def write_lira_dataset(logdir: Path, n: int, nclass: int, rng) -> np.ndarray:
    """``train.py`` ``get_data``: ``x_train.npy`` and ``y_train.npy`` cached in the logdir."""
    logdir.mkdir(parents=True, exist_ok=True)
    labels = rng.integers(0, nclass, n)
    np.save(logdir / "x_train.npy", rng.normal(size=(n, 2, 2, 3)).astype(np.float32))
    np.save(logdir / "y_train.npy", labels)
    return labels


def write_lira_model(
    logdir: Path,
    labels: np.ndarray,
    rng,
    *,
    expid=None,
    num_experiments=None,
    seed=None,
    arch="wrn28-2",
    lr=0.1,
    epochs=100,
    save_steps=20,
    pkeep=0.5,
    only_subset=None,
    stop_at=None,
    scored=True,
    tunename=False,
    n_aug=2,
    nclass=4,
    shift=3.0,
):
    """One model folder as ``train.py`` ``main``, ``inference.py`` and ``score.py`` leave it.

    ``train.py``: the folder name (``experiment-<expid>_<num>``, ``experiment-<seed>``, or the
    ``--tunename`` name), ``hparams.json`` (``MemModule.params``), ``keep.npy``, checkpoints
    ``ckpt/<epoch:010d>.npz`` every ``save_steps`` epochs (``TrainLoop.train``), and under
    ``--patience`` one more at the stopping epoch ``stop_at``, where training ends.
    ``inference.py``: ``logits/<epoch:010d>.npy`` (examples, 1, augmentations, classes) for the
    last checkpoint and the epoch before it when that one was saved. ``score.py``:
    ``scores/<same name>.npy``. ``scored=False``: a model still training (no logits, scores).
    """
    n = labels.size
    if seed is None:
        seed = 1000 + (expid or 0)
    args = {
        "arch": arch,
        "lr": lr,
        "batch": 256,
        "weight_decay": 0.0005,
        "augment": "weak",
        "seed": seed,
    }
    params = {
        "epochs": epochs,
        "expid": expid,
        "num_experiments": num_experiments,
        "pkeep": pkeep,
        "save_steps": save_steps,
        "only_subset": only_subset,
        **args,
    }
    if tunename:
        name = "_".join(sorted(f"{k}={v}" for k, v in args.items()))
    elif expid is not None:
        name = f"experiment-{expid}_{num_experiments}"
    else:
        name = f"experiment-{seed}"
    d = logdir / name
    (d / "ckpt").mkdir(parents=True)
    (d / "tb").mkdir()
    (d / "hparams.json").write_text(json.dumps(params))
    keep = lira_keep(
        n,
        expid=expid,
        num_experiments=num_experiments,
        seed=seed,
        pkeep=pkeep,
        only_subset=only_subset,
    )
    np.save(d / "keep.npy", keep)
    last = epochs if stop_at is None else stop_at
    ckpts = [e for e in range(save_steps, last + 1, save_steps)]
    if stop_at is not None and stop_at not in ckpts:
        ckpts.append(stop_at)
    for e in ckpts[-20:]:  # objax Checkpoint(keep_ckpts=20)
        np.savez(d / "ckpt" / f"{e:010d}.npz", w=np.zeros(1))
    if not scored:
        return d, keep
    (d / "logits").mkdir()
    (d / "scores").mkdir()
    max_epoch = max(ckpts)
    for e in (max_epoch - 1, max_epoch):
        if e not in ckpts:
            continue  # inference.py: "no checkpoint saved here"
        logits = rng.normal(0, 1, (n, 1, n_aug, nclass)).astype(np.float32)
        logits[np.arange(n), 0, :, labels] += shift * keep[:, None]
        np.save(d / "logits" / f"{e:010d}.npy", logits)
        np.save(d / "scores" / f"{e:010d}.npy", lira_scores_from_logits(logits, labels))
    return d, keep


def write_lira_experiment(logdir: Path, num: int = 8, n: int = 30, seed: int = 0, **kwargs):
    """``scripts/train_demo.sh``: ``num`` models ``--expid 0..num-1 --num_experiments num``."""
    rng = np.random.default_rng(seed)
    labels = write_lira_dataset(logdir, n, kwargs.get("nclass", 4), rng)
    keeps = [
        write_lira_model(logdir, labels, rng, expid=i, num_experiments=num, **kwargs)[1]
        for i in range(num)
    ]
    return np.stack(keeps), labels


# -- LiRA PyTorch port ----------------------------------------------------------------------------
def torch_save_zip(path: Path, tensor_bytes: list[int]) -> None:
    """A file laid out as ``torch.save`` writes one (``torch/serialization.py`` ``_save``).

    A zip archive named after the file: ``<name>/data.pkl`` (the pickled structure),
    ``<name>/byteorder``, one ``<name>/data/<key>`` entry per tensor storage,
    ``<name>/version`` and ``<name>/.data/serialization_id``, stored uncompressed.
    """
    name = path.stem
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as z:
        z.writestr(
            f"{name}/data.pkl", pickle.dumps({str(i): b for i, b in enumerate(tensor_bytes)})
        )
        z.writestr(f"{name}/byteorder", "little")
        for i, b in enumerate(tensor_bytes):
            z.writestr(f"{name}/data/{i}", bytes(b))
        z.writestr(f"{name}/version", "3\n")
        z.writestr(f"{name}/.data/serialization_id", str(np.random.default_rng().integers(1e9)))


#: tensor storage sizes (bytes) of two architectures, for model.pt
ARCH_TENSORS = {"resnet18": [1728, 256, 36864, 256, 4096], "wresnet28-2": [864, 128, 9216]}


def write_lira_pytorch(
    savedir: Path,
    n_shadows: int = 8,
    n: int = 30,
    *,
    shadow_ids=None,
    model="resnet18",
    n_queries: int = 2,
    nclass: int = 10,
    scored=True,
    shift: float = 3.0,
    seed: int = 0,
):
    """``<savedir>/<shadow_id>/`` as the port's ``train.py``, ``inference.py``, ``score.py``.

    ``train.py`` ``run``: uniforms under seed 0 ranked per example (every example IN for
    ``pkeep * n_shadows`` models), ``keep.npy`` the bool mask over the whole training set,
    ``model.pt``. ``inference.py``: ``logits.npy`` (examples, queries, classes). ``score.py``
    ``load_one``: ``scores.npy`` (examples, queries). Returns the keep masks and labels.
    """
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, nclass, n)
    keeps = []
    for sid in range(n_shadows) if shadow_ids is None else shadow_ids:
        u = np.random.RandomState(0).uniform(0, 1, size=(n_shadows, n))
        keep_idx = (u.argsort(0) < int(0.5 * n_shadows))[sid].nonzero()[0]
        keep = np.full(n, False)
        keep[keep_idx] = True
        d = savedir / str(sid)
        d.mkdir(parents=True)
        np.save(d / "keep.npy", keep)
        torch_save_zip(d / "model.pt", ARCH_TENSORS[model])
        keeps.append(keep)
        if not scored:
            continue
        logits = rng.normal(0, 1, (n, n_queries, nclass)).astype(np.float32)
        logits[np.arange(n), :, labels] += shift * keep[:, None]
        np.save(d / "logits.npy", logits)
        p = np.exp(logits - logits.max(axis=-1, keepdims=True)).astype(np.float64)
        p /= p.sum(axis=-1, keepdims=True)
        y_true = p[np.arange(n), :, labels]
        p[np.arange(n), :, labels] = 0
        np.save(d / "scores.npy", np.log(y_true + 1e-45) - np.log(p.sum(axis=-1) + 1e-45))
    return np.stack(keeps), labels


# -- Privacy Meter 2.0 --------------------------------------------------------------------------
def pm_pairs(n: int, pairs: int, rng) -> np.ndarray:
    """``models/utils.py`` ``split_dataset_for_training``: complementary pairs of halves."""
    idx = np.arange(n)
    keep = np.full((2 * pairs, n), True, dtype=bool)
    for i in range(pairs):
        rng.shuffle(idx)
        keep[2 * i, idx[n // 2 :]] = False
        keep[2 * i + 1, idx[: n // 2]] = False
    return keep


def pm_poisson_pairs(n: int, pairs: int, rng) -> np.ndarray:
    """``util.py`` ``split_dataset_for_training_poisson``: pair 0 by coins, the others halves."""
    keep = pm_pairs(n, pairs, rng)
    first = rng.choice(2, n, p=[0.5, 0.5]).astype(bool)
    keep[0], keep[1] = first, ~first
    return keep


def pm_softmax(member_rows: np.ndarray, rng, k: int = 1, shift: float = 2.5) -> np.ndarray:
    """``get_signals.py`` ``get_softmax``: the probability of the true label, float32."""
    z = rng.normal(0.0, 1.0, (member_rows.shape[0] * k, member_rows.shape[1]))
    z += shift * np.repeat(member_rows, k, axis=0)
    return (1.0 / (1.0 + np.exp(-z))).astype(np.float32)


def pm_subset(data_size: int, memberships: np.ndarray, rng) -> np.ndarray:
    """``audit.py`` ``sample_auditing_dataset``: members of model 0, then non-members."""
    members = rng.choice(np.flatnonzero(memberships[0]), data_size // 2, replace=False)
    non = rng.choice(np.flatnonzero(~memberships[0]), data_size // 2, replace=False)
    return np.concatenate([members, non])


def pm_metadata(memberships, *, model_name="wrn28-2", dataset="cifar10", epochs=100, dp=False):
    """``models/utils.py`` ``prepare_models``: the record of each model."""
    meta = {}
    for i in range(memberships.shape[0]):
        meta[str(i)] = {
            "num_train": int(memberships[i].sum()),
            "optimizer": "SGD",
            "batch_size": 256,
            "epochs": epochs,
            "model_name": model_name,
            "learning_rate": 0.1,
            "weight_decay": 0,
            "model_path": f"demo/models/model_{i}.pkl",
            "train_acc": 0.9 + 0.01 * i,
            "test_acc": 0.6,
            "train_loss": 0.3,
            "test_loss": 1.2,
            "dataset": dataset,
        }
        if dp:
            meta[str(i)].update(epsilon=8.0, delta=1e-5)
    return meta


def write_privacy_meter(
    root: Path,
    memberships: np.ndarray,
    audit_idx,
    rng,
    *,
    alg: str = "rmia",
    num_experiments: int = 1,
    ramia_k: int = 0,
    plain: bool = True,
    n_loaded: int | None = None,
    metadata: dict | None = None,
):
    """A Privacy Meter ``log_dir`` for an audit of ``audit_idx`` (in the order audited).

    ``prepare_models``: ``models/memberships.npy``, ``model_<i>.pkl``,
    ``models_metadata.json``. ``get_model_signals``: ``signals/<alg>_signals.npy`` (audited
    samples x models; the first ``n_loaded`` models when ``load_models`` reuses a ``log_dir``
    with more), ``_pop`` population signals, and for RaMIA ``<alg>_ramia_signals.npy``
    (``sample_size`` rows per sample). ``get_audit_results``: ``<report>/exp/
    attack_result_<t>.npz`` for the target models ``range(num_experiments)``, ``<report>``
    being ``report`` (``run_mia.py``) or ``report_ramia`` (``run_range_mia.py``, memberships
    repeated ``sample_size`` times). Returns the signal rows' memberships (samples x models).
    """
    models = root / "models"
    models.mkdir(parents=True)
    np.save(models / "memberships.npy", memberships)
    meta = pm_metadata(memberships) if metadata is None else metadata
    for i in range(memberships.shape[0]):
        (models / f"model_{i}.pkl").write_bytes(b"state dict")
    (models / "models_metadata.json").write_text(json.dumps(meta, indent=4))
    (root / "signals").mkdir()
    used = memberships[: n_loaded or memberships.shape[0]]
    rows = used[:, audit_idx].T
    if plain:
        np.save(root / "signals" / f"{alg}_signals.npy", pm_softmax(rows, rng))
        np.save(root / "signals" / f"{alg}_signals_pop.npy", pm_softmax(rows[:7] * 0, rng))
    if ramia_k:
        np.save(root / "signals" / f"{alg}_ramia_signals.npy", pm_softmax(rows, rng, k=ramia_k))
    report = root / ("report_ramia" if ramia_k and not plain else "report")
    exp = report / "exp"
    exp.mkdir(parents=True)
    (report / "log_time_analysis.log").write_text("Loading dataset took 0.1 seconds\n")
    for t in range(num_experiments):
        target = used[t, audit_idx]
        if ramia_k and not plain:
            target = np.repeat(target, ramia_k)
        np.savez(
            exp / f"attack_result_{t}",
            fpr=np.linspace(0, 1, 5),
            tpr=np.linspace(0, 1, 5),
            auc=0.5,
            one_tenth_fpr=0.0,
            zero_fpr=0.0,
            scores=rng.normal(size=target.size),
            memberships=target.ravel(),
        )
        (exp / f"ROC_{t}.png").write_bytes(b"png")
    return rows


# -- privacy-estimates --------------------------------------------------------------------------
def attack_results(scores, bits, threshold) -> dict:
    """``AttackResults.from_scores_threshold_and_labels``: guesses = scores >= threshold."""
    guess = np.asarray(scores) >= threshold
    bits = np.asarray(bits).astype(bool)
    return {
        "FN": int(np.sum(~guess & bits)),
        "FP": int(np.sum(guess & ~bits)),
        "TN": int(np.sum(~guess & ~bits)),
        "TP": int(np.sum(guess & bits)),
    }


def write_attack_results(path: Path, res: dict) -> Path:
    """``AttackResults.to_json``: ``json.dump(asdict(self), f)``, fields FN, FP, TN, TP."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as f:
        json.dump({k: res[k] for k in ("FN", "FP", "TN", "TP")}, f)
    return path


def write_dp_parameters(folder: Path, noise_multiplier=1.1, num_steps=1000, q=0.01) -> None:
    """``DPParameters.save_to_disk``: ``dump(asdict(self), f)``."""
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "dp_parameters.json").open("w+") as f:
        json.dump(
            {
                "noise_multiplier": noise_multiplier,
                "num_steps": num_steps,
                "subsampling_probability": q,
            },
            f,
        )


def challenge_game(n: int, rng, mu: float = 1.5):
    """One game: bits by ``rng.integers(0, 2)`` (``mi_challenge.py``), scores shifted by mu."""
    bits = rng.integers(0, 2, n)
    scores = rng.normal(0.0, 1.0, n) + mu * bits
    return scores, bits


def roc_thresholds(scores, bits) -> np.ndarray:
    """The thresholds ``compute_privacy_curve_lo_hi`` evaluates (``sklearn`` ``roc_curve``)."""
    from sklearn.metrics import roc_curve

    _, _, thrs = roc_curve(y_true=bits, y_score=scores)
    return thrs[np.isfinite(thrs)]


def write_challenge_scores(folder: Path, scores, bits, *, fmt="jsonl", bits_column="challenge_bit"):
    """A game's ``scores`` and ``challenge_bits``: HF datasets, or their JSON Lines form.

    ``fmt="hf"``: ``Dataset.from_dict({"score": ...}).save_to_disk`` (``rmia.py``) and the
    bits with a ``ClassLabel(names=["no_member", "member"])`` feature (``mi_challenge.py``);
    needs the ``datasets`` package. ``fmt="jsonl"``: ``Dataset.to_json`` of each, as
    ``convert_hfd_to_jsonl`` writes them (one object a line).
    """
    folder.mkdir(parents=True, exist_ok=True)
    if fmt == "hf":
        import datasets

        datasets.Dataset.from_dict({"score": np.asarray(scores, dtype=np.float64)}).save_to_disk(
            str(folder / "scores")
        )
        feats = datasets.Features({bits_column: datasets.ClassLabel(names=["no_member", "member"])})
        datasets.Dataset.from_dict(
            {bits_column: [int(b) for b in bits]}, features=feats
        ).save_to_disk(str(folder / "challenge_bits"))
        return
    with (folder / "scores.jsonl").open("w") as f:
        for s in scores:
            f.write(json.dumps({"score": float(s)}) + "\n")
    with (folder / "challenge_bits.jsonl").open("w") as f:
        for b in bits:
            f.write(json.dumps({bits_column: int(b)}) + "\n")


def gaussian_dp_mu(scores_in, scores_out) -> float:
    """The binormal shift of two score samples (a rough check that a ROC was read)."""
    return (np.mean(scores_in) - np.mean(scores_out)) / math.sqrt(
        0.5 * (np.var(scores_in) + np.var(scores_out))
    )
