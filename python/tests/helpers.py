"""What the tests share: the repository's fixtures, the Rust CLI, and the comparison with the
reference outputs (the same rules and tolerances as the Rust tests'
`superpoint/tests/common/mod.rs`)."""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"
WEIGHTS = FIXTURES / "weights" / "random-seed1.safetensors"
IMAGES = FIXTURES / "images"

#: Tolerance on scores against the fixtures (their PyTorch f32 sums carry ~1e-6 of noise).
SCORE_TOL = 1e-5
#: Smallest cosine between a descriptor and the fixture's.
MIN_COSINE = 0.99999


@dataclass
class Case:
    """One reference case of `tests/fixtures/cases.json`."""

    name: str
    image: Path
    original_size: Tuple[int, int]
    frame_size: Tuple[int, int]
    max_keypoints: int
    keypoint_threshold: float
    nms_radius: int
    channel: str
    num_keypoints: int

    def array(self, name: str) -> np.ndarray:
        return np.load(FIXTURES / "cases" / self.name / f"{name}.npy")

    def options(self) -> Dict[str, Any]:
        """The case's options as keyword arguments of ``model(...)``."""
        return {
            "max_keypoints": self.max_keypoints,
            "keypoint_threshold": self.keypoint_threshold,
            "nms_radius": self.nms_radius,
            "channel": self.channel,
            "frame": self.frame_size,
        }


def cases() -> List[Case]:
    listed = json.loads((FIXTURES / "cases.json").read_text())
    return [
        Case(
            name=c["name"],
            image=FIXTURES / c["image"],
            original_size=tuple(c["original_size"]),
            frame_size=tuple(c["frame_size"]),
            max_keypoints=c["max_keypoints"],
            keypoint_threshold=c["keypoint_threshold"],
            nms_radius=c["nms_radius"],
            channel=c["channel"],
            num_keypoints=c["num_keypoints"],
        )
        for c in listed
    ]


def case(name: str) -> Case:
    return next(c for c in cases() if c.name == name)


def cli_binary() -> Path:
    """The `superpoint` binary the workspace built (`$SUPERPOINT_CLI` overrides)."""
    if "SUPERPOINT_CLI" in os.environ:
        return Path(os.environ["SUPERPOINT_CLI"])
    for profile in ("debug", "release"):
        path = REPO / "target" / profile / "superpoint"
        if path.exists():
            return path
    raise FileNotFoundError(
        "no superpoint binary: build it with `cargo build -p superpoint` (or set SUPERPOINT_CLI)"
    )


@dataclass
class CliOutput:
    keypoints: np.ndarray
    scores: np.ndarray
    descriptors: Optional[np.ndarray]
    summary: Dict[str, Any]


def run_cli(image: Path, out: Path, options: Dict[str, Any], backend: str = "cpu") -> CliOutput:
    """`superpoint detect` on one image with `options` (keyword arguments of ``model(...)``)."""
    args = [
        str(cli_binary()),
        "detect",
        str(image),
        "--weights",
        str(WEIGHTS),
        "--backend",
        backend,
        "--no-overlay",
        "--out",
        str(out),
    ]
    for name, value in options.items():
        flag = "--" + name.replace("_", "-")
        if name == "frame":
            args.append(f"{flag}={value[0]}x{value[1]}")
        elif isinstance(value, bool):
            if value:
                args.append(flag)
        else:
            args.append(f"{flag}={value}")
    subprocess.run(args, check=True, capture_output=True, timeout=600)
    folder = out / image.stem
    summary = json.loads((folder / "keypoints.json").read_text())
    descriptors = folder / "descriptors.npy"
    return CliOutput(
        keypoints=np.asarray(summary["keypoints"], dtype=np.float32).reshape(-1, 2),
        scores=np.asarray(summary["scores"], dtype=np.float32),
        descriptors=np.load(descriptors) if descriptors.exists() else None,
        summary=summary,
    )


def compare_order(
    got: Sequence[Tuple[int, int]],
    got_scores: np.ndarray,
    want: Sequence[Tuple[int, int]],
    want_scores: np.ndarray,
    boundary: float,
) -> Tuple[List[Tuple[int, int]], List[str]]:
    """(our index, fixture index) of every point in both lists, and the problems: the lists
    must be identical except that a point may sit at another index only among points whose
    fixture scores are within SCORE_TOL of its own, and may be in one list only when its score is
    within SCORE_TOL of `boundary` (the threshold, or the cut-off score)."""
    index = {p: j for j, p in enumerate(want)}
    matches: List[Tuple[int, int]] = []
    problems: List[str] = []
    seen = [False] * len(want)
    for i, p in enumerate(got):
        j = index.get(p)
        if j is None:
            if abs(got_scores[i] - boundary) > SCORE_TOL:
                problems.append(f"keypoint {p} (score {got_scores[i]}) at {i} is not in the fixture")
            continue
        seen[j] = True
        matches.append((i, j))
        here = want_scores[i] if i < len(want_scores) else boundary
        if i != j and abs(want_scores[j] - here) > SCORE_TOL:
            problems.append(f"keypoint {p} is at index {i}, fixture index {j}")
    for j, p in enumerate(want):
        if not seen[j] and abs(want_scores[j] - boundary) > SCORE_TOL:
            problems.append(f"fixture keypoint {p} (score {want_scores[j]}) at {j} is missing")
    return matches, problems


def assert_matches_fixture(c: Case, keypoints: np.ndarray, scores: np.ndarray, descriptors: np.ndarray) -> None:
    """The detection against the case's reference outputs (see `compare_order`): coordinates
    within 1e-4 (relative), scores within SCORE_TOL, descriptor cosines at least MIN_COSINE."""
    (w0, h0), (w, h) = c.original_size, c.frame_size
    net = np.floor(keypoints.astype(np.float64) * [w / w0, h / h0] + 0.5).astype(np.int64)
    want_net = c.array("keypoints_net")
    want_kp, want_scores, want_desc = c.array("keypoints"), c.array("scores"), c.array("descriptors")
    cut = c.max_keypoints >= 0 and len(want_net) == c.max_keypoints
    boundary = float(want_scores[-1]) if cut else c.keypoint_threshold
    matches, problems = compare_order(
        [tuple(p) for p in net.tolist()],
        scores,
        [tuple(p) for p in want_net.tolist()],
        want_scores,
        boundary,
    )
    assert not problems, f"{c.name}: {problems[:10]}"
    ours = np.array([i for i, _ in matches])
    theirs = np.array([j for _, j in matches])
    assert np.all(
        np.abs(keypoints[ours] - want_kp[theirs]) <= 1e-4 * np.maximum(np.abs(want_kp[theirs]), 1.0)
    ), c.name
    assert np.all(np.abs(scores[ours] - want_scores[theirs]) <= SCORE_TOL), c.name
    a, b = descriptors[ours].astype(np.float64), want_desc[theirs].astype(np.float64)
    cosine = (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    assert cosine.min() >= MIN_COSINE, f"{c.name}: descriptor cosine {cosine.min()}"
