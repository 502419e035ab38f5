"""`verify --prove`, `--synthesize` and `--bmc K`: the symbolic checks (z3).

It joins the catalogue, the specs, the z3 encodings and rendering, and prints (the
symbolic mode imports it only when it runs, so z3 loads then). Exit codes as for
`verify`: 0 proved (or,
with --bmc, nothing violated within the bound), 1 a counterexample to induction or a
violation, 2 usage or an encoding that disagrees with its explicit model, 3 z3 gave
no answer (timeout, UNKNOWN) or a proof was vacuous: never reported as PROVED.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from leadercheck.checker.app.output import say
from leadercheck.checker.errors import LeadercheckError
from leadercheck.checker.io import files
from leadercheck.checker.properties import Kind, always
from leadercheck.checker.render.context import TraceContext
from leadercheck.checker.render.files import write_diagram_files, write_trace_files
from leadercheck.checker.render.report import written_lines
from leadercheck.checker.render.text import trace_lines
from leadercheck.checker.result import PropertyResult, Verdict
from leadercheck.checker.solver.answer import Answer
from leadercheck.checker.solver.crosscheck import Agreement, cross_check
from leadercheck.checker.solver.encodings import symbolic_for
from leadercheck.checker.solver.encodings.proofs import problem_for, proof_for
from leadercheck.checker.solver.induction import INITIATION, Proof, Status, prove
from leadercheck.checker.solver.synthesis import synthesize
from leadercheck.models.params import ProtocolEntry
from leadercheck.specs.expectations import Expectations

INCOMPLETE = 3
ENCODING_ERROR = 2


def prove_command(
    protocol: ProtocolEntry, without: Sequence[str], timeout: float, out: Path
) -> int:
    """Prove the protocol's claims for any number of nodes, or show a CTI."""
    model = proof_for(protocol.name)
    files.check_output_dir(out, "--out")
    proof = prove(model, without=without, timeout=timeout)
    conjuncts = model.conjuncts()
    say(f"{protocol.name} --prove: {model.summary}")
    claims = [c.name for c in conjuncts if c.claim]
    helpers = [c.name for c in conjuncts if not c.claim and c.name not in without]
    say(f"  claims:        {', '.join(claims)}")
    say(f"  strengthened:  {', '.join(helpers) or '(nothing)'}")
    if proof.dropped:
        say(f"  left out:      {', '.join(proof.dropped)}")
    say(f"  obligations:   {len(proof.obligations)} z3 queries in {proof.seconds:.2f} s")
    for line in _times(proof):
        say(f"    {line}")
    if proof.status is Status.PROVED:
        say(f"PROVED for every number of nodes: {', '.join(claims)}")
        return 0
    if proof.status is Status.VACUOUS:
        say(f"VACUOUS: {proof.step} is impossible in every state of the invariant")
        return INCOMPLETE
    if proof.status is Status.UNKNOWN:
        last = proof.obligations[-1]
        say(f"UNKNOWN: z3 gave no answer on {last.step} / {last.conjunct}: {last.reason}")
        return INCOMPLETE
    assert proof.cti is not None
    where = "an initial state" if proof.step == INITIATION else f"the step {proof.step}"
    reason = f"a state of the invariant; {where} breaks {proof.broken}"
    title = f"{protocol.name}: counterexample to induction ({proof.broken})"
    outcome = PropertyResult(
        always(proof.broken, lambda _: True), Verdict.VIOLATED, proof.cti, reason
    )
    ctx = TraceContext(protocol.name, {}, outcome, title)
    say(f"CTI: {proof.broken} is not preserved by {proof.step}")
    say("\n".join(trace_lines(ctx)))
    after = proof.cti.last.summary
    say("  after: " + "; ".join(f"{k} {v}" for k, v in after.items()))
    written = write_diagram_files(out, f"{protocol.name}.cti", ctx)
    say("\n".join(written_lines(written)))
    if proof.dropped:
        say(f"the invariant without {', '.join(proof.dropped)} is too weak to prove it")
    else:
        say(
            "not proved: the claim is false or the invariant too weak; explicit search "
            f"(verify --protocol {protocol.name}) shows whether a real trace breaks it"
        )
    return 1


def _times(proof: Proof) -> list[str]:
    """z3 seconds per step kind (summed over the conjuncts), in the order checked."""
    totals: dict[str, float] = {INITIATION: 0.0}
    for o in proof.obligations:
        step = o.step.removesuffix(" possible")
        totals[step] = totals.get(step, 0.0) + o.seconds
    return [f"{step}: {seconds:.3f} s" for step, seconds in totals.items()]


def synthesize_command(protocol: ProtocolEntry, timeout: float) -> int:
    """The timing region in which the protocol's hazard cannot happen."""
    problem = problem_for(protocol.name)
    result = synthesize(problem, timeout=timeout)
    say(f"{protocol.name} --synthesize: parameters {', '.join(map(str, problem.parameters))}")
    say("\n".join(f"  {line}" for line in result.lines()))
    if result.answer is Answer.SAT:
        return 0
    if result.answer is Answer.UNKNOWN:
        return INCOMPLETE
    return ENCODING_ERROR


def bmc_command(
    protocol: ProtocolEntry,
    values: Mapping[str, int],
    expectations: Expectations,
    bound: int,
    timeout: float,
    out: Path,
) -> int:
    """Bounded model checking to `bound` steps, each claim cross-checked by explicit search."""
    model = protocol.build(values)
    sym = symbolic_for(protocol.name, model)
    files.check_output_dir(out, "--out")
    props = [
        p for p in expectations.properties(protocol.name) if p.kind in (Kind.ALWAYS, Kind.SOMETIMES)
    ]
    params = " ".join(f"{k}={v}" for k, v in values.items())
    say(f"{protocol.name}  {params}  --bmc {bound}")
    agreements = cross_check(model, sym, props, bound, timeout)
    for a in agreements:
        say(f"  {a.text}")
    code = _bmc_code(agreements)
    stems = 0
    for a in agreements:
        if a.bmc.trace is None:
            continue
        result = PropertyResult(a.prop, a.bmc.verdict, a.bmc.trace, "found by z3")
        ctx = TraceContext(protocol.name, values, result)
        say(f"\nz3 {result.trace_kind} for {a.prop.name}:")
        say("\n".join(trace_lines(ctx)))
        if result.verdict is Verdict.VIOLATED:  # counterexamples are written, as by verify
            stem = f"{protocol.name}.bmc" + (f".{a.prop.name}" if stems else "")
            stems += 1
            say("\n".join(written_lines(write_trace_files(out, stem, ctx))))
    return code


def _bmc_code(agreements: Sequence[Agreement]) -> int:
    if any(a.bmc.answer is Answer.UNKNOWN for a in agreements):
        say("UNKNOWN: z3 gave no answer for every claim within the time limit")
        return INCOMPLETE
    if not all(a.agree for a in agreements):
        raise LeadercheckError("the symbolic encoding and the explicit model disagree (see above)")
    violated = any(a.bmc.verdict is Verdict.VIOLATED for a in agreements)
    return 1 if violated else 0


def refuse_params(mode: str, given: Mapping[str, Any]) -> None:
    if given:
        raise LeadercheckError(f"{mode} covers every cluster size and timing; drop -p/--nodes")
