"""A saved trace as prose for an incident review: one sentence per step, then the verdict.

Every sentence is built from the recorded action (who did what to whom, with its note)
and from how each participant's one-line summary changed, so it reads the same way
for every protocol.
"""

from __future__ import annotations

from collections.abc import Mapping

from leadercheck.checker.model import Action
from leadercheck.checker.replay import SavedTrace


def participant(name: str) -> str:
    """'n1' stays as it is; a role word such as 'store' or 'clock' gets an article."""
    return name if any(c.isdigit() for c in name) else f"the {name}"


def _deed(action: Action) -> str:
    deed = f'{participant(action.actor)} does "{action.name}"'
    if action.target:
        deed += f" on {participant(action.target)}"
    if action.note:
        deed += f" ({action.note})"
    return deed


def _changes(action: Action, before: Mapping[str, str], after: Mapping[str, str]) -> list[str]:
    """Each participant whose summary changed, the actor and target first."""
    order = [action.actor] + ([action.target] if action.target else [])
    order += [p for p in list(before) + list(after) if p not in order]
    seen: set[str] = set()
    changes = []
    for p in order:
        if p in seen:
            continue
        seen.add(p)
        old, new = before.get(p), after.get(p)
        if old == new or new is None:
            continue
        was = f' (was "{old}")' if old is not None else ""
        changes.append(f'{participant(p)} is "{new}"{was}')
    return changes


def step_sentence(
    index: int, action: Action, before: Mapping[str, str], after: Mapping[str, str]
) -> str:
    """'Step 3: n1 does "pause" (process pause begins) while it is "leader t1"; afterwards ...'."""
    sentence = f"Step {index}: {_deed(action)}"
    if action.actor in before:
        sentence += f' while it is "{before[action.actor]}"'
    changes = _changes(action, before, after)
    if changes:
        sentence += "; afterwards " + ", ".join(changes)
    else:
        sentence += "; no participant's state visibly changes"
    return sentence + "."


def explain_lines(saved: SavedTrace) -> list[str]:
    """The setting, one sentence per step, and the property with why it is decided."""
    params = ", ".join(f"{k}={v}" for k, v in saved.params.items())
    first = saved.steps[0].summary
    start = ", ".join(f'{participant(p)} is "{s}"' for p, s in first.items())
    lines = [
        f"{saved.protocol} ({params}): a {saved.trace_kind or 'trace'} of {len(saved.steps) - 1} "
        f"steps for {saved.property_name}.",
        f"Initially {start}." if start else "Initially nothing is summarised.",
    ]
    for prev, step in zip(saved.steps, saved.steps[1:], strict=False):
        assert step.action is not None
        lines.append(step_sentence(step.index, step.action, prev.summary, step.summary))
    outcome = "is reached" if saved.property_kind == "sometimes" else "is broken"
    about = f" ({saved.property_description})" if saved.property_description else ""
    end = f"The property {saved.property_name}{about} {outcome} at step {len(saved.steps) - 1}"
    lines.append(f"{end}: {saved.reason}." if saved.reason else f"{end}.")
    return lines
