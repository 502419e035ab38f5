"""Kubernetes leader election (client-go's `tools/leaderelection`), wherever a program's three
durations are written, with each program's own defaults (README "Kubernetes").

- **Spellings.** component-base's flags `--leader-elect-lease-duration/-renew-deadline/
  -retry-period` (kube-controller-manager, kube-scheduler, cloud-controller-manager,
  cluster-autoscaler, cluster-api), and `--leader-election-lease-duration/...` (the
  kubernetes-csi sidecars, cert-manager, argo-rollouts): in a flags file, a Pod's or a
  workload's `command:`/`args:` (a kubeadm static Pod manifest), kubeadm's
  `extraArgs` (a map in v1beta3, a name/value list in v1beta4). A `KubeSchedulerConfiguration`'s
  `leaderElection`, a `KubeControllerManagerConfiguration`'s `Generic.LeaderElection` (which
  the controller manager serves but never reads: it has no --config), cert-manager's
  `leaderElectionConfig` and its chart's `global.leaderElection`, kubespray's variables, and
  any other `leaderElection:` block. Flags win over a configuration file.
- **Durations** are Go's (`time.ParseDuration`): a unit is required (`15` is refused; `0`
  alone is allowed). cert-manager's configuration reads a bare number as nanoseconds.
- **Defaults are the program's own**: 15/10/2 s for component-base's programs and
  controller-runtime, 15/10/5 for the CSI sidecars, 60/40/15 for cert-manager, 1m/40s/5s for
  cluster-api's KubeadmControlPlane. For a program leadercheck does not know, a missing
  duration is not guessed (name it with `leadercheck.program`).
- **Semantics** (client-go): the leader renews every retryPeriod inside a renewDeadline
  window and stops leading (OnStoppedLeading; most programs exit) when a window passes without
  a renewal, so it may lead retryPeriod + renewDeadline after its last renewal; candidates poll
  every retryPeriod to 2.2 x retryPeriod (JitterFactor 1.2) and take over once leaseDuration,
  recorded in whole seconds, has passed on their own clock since they saw the record change.
  NewLeaderElector refuses leaseDuration <= renewDeadline and renewDeadline <= 1.2 x
  retryPeriod.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from leadercheck.checker.config.document import Document, KeyPath, shown
from leadercheck.checker.config.reading import (
    Finder,
    Flag,
    Knob,
    Unreadable,
    flags_in,
    normal,
    one_flag,
)
from leadercheck.checker.config.systems.base import Elector, System, Term, Timing, Values
from leadercheck.checker.config.systems.workloads import containers, env_of, program_of
from leadercheck.checker.errors import LeadercheckError

JITTER = 1.2  # client-go's JitterFactor
NAMES = ("lease_duration", "renew_deadline", "retry_period")
FIELDS = ("leaseDuration", "renewDeadline", "retryPeriod")
SUFFIXES = ("lease-duration", "renew-deadline", "retry-period")
_GO = re.compile(r"[-+]?(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:ns|us|µs|μs|ms|s|m|h))+")
_GO_PART = re.compile(r"([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h)")
_UNITS = {
    "ns": 1e-9,
    "us": 1e-6,
    "µs": 1e-6,
    "μs": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "m": 60.0,
    "h": 3600.0,
}


def go_duration(value: object, knob: str) -> float:
    """A duration as Go's time.ParseDuration reads it: a unit is required."""
    if isinstance(value, bool) or value is None:
        raise Unreadable(f"{shown(value)} is not a duration")
    text = str(value).strip()
    if isinstance(value, int | float) or text.lstrip("+-").replace(".", "", 1).isdigit():
        if text.lstrip("+-") in ("0", "0.0") and isinstance(value, str):
            return 0.0
        raise Unreadable(
            f"{shown(value)} has no unit: a Go duration needs one (15s), and the program refuses it"
        )
    if not _GO.fullmatch(text):
        raise Unreadable(f"{shown(value)} is not a Go duration (15s, 1m30s, 500ms)")
    number = sum(float(n) * _UNITS[u] for n, u in _GO_PART.findall(text))
    if text.startswith("-") and number:
        raise LeadercheckError(f"{knob}: {shown(value)} is negative")
    if number > 1_000_000:
        raise LeadercheckError(
            f"{knob}: {shown(value)} is past any timeout a leader election runs on"
        )
    return number


def nanoseconds_or_go(value: object, knob: str) -> float:
    """cert-manager's configuration Duration: a Go duration, or a bare number of nanoseconds."""
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 0:
            raise LeadercheckError(f"{knob}: {value} is negative")
        return round(value * 1e-9, 9)
    return go_duration(value, knob)


@dataclass(frozen=True)
class Program:
    """A program that runs client-go's leader election, and its own defaults."""

    name: str
    defaults: tuple[float, float, float] | None  # lease, renew, retry; None: unknown
    of: str  # whose default, as the report says it
    prefix: str = "leader-elect-"  # its duration flags: --{prefix}lease-duration
    enable: tuple[str, ...] = ("leader-elect",)  # its on/off flag (and older names)
    on: bool = True  # whether it elects without the flag


COMPONENT_BASE = (15.0, 10.0, 2.0)
PROGRAMS = {
    p.name: p
    for p in (
        Program("kube-controller-manager", COMPONENT_BASE, "kube-controller-manager's"),
        Program("kube-scheduler", COMPONENT_BASE, "kube-scheduler's"),
        Program("cloud-controller-manager", COMPONENT_BASE, "cloud-controller-manager's"),
        Program("cluster-autoscaler", COMPONENT_BASE, "cluster-autoscaler's"),
        Program(
            "kubeadm-control-plane-controller",
            (60.0, 40.0, 5.0),
            "cluster-api KubeadmControlPlane's",
            on=False,
        ),
        Program("cluster-api-controller", COMPONENT_BASE, "cluster-api's", on=False),
        Program(
            "manager", COMPONENT_BASE, "controller-runtime's (a kubebuilder manager)", on=False
        ),
        *(
            Program(
                n,
                (15.0, 10.0, 5.0),
                "the kubernetes-csi sidecars'",
                "leader-election-",
                ("leader-election", "enable-leader-election"),
                on=False,
            )
            for n in (
                "csi-provisioner",
                "csi-attacher",
                "csi-resizer",
                "csi-snapshotter",
                "snapshot-controller",
            )
        ),
        Program(
            "cert-manager-controller", (60.0, 40.0, 15.0), "cert-manager's", "leader-election-"
        ),
        Program(
            "cert-manager-cainjector", (60.0, 40.0, 15.0), "cert-manager's", "leader-election-"
        ),
        Program("argo-rollouts", COMPONENT_BASE, "argo-rollouts'", "leader-election-"),
    )
}
ALIASES = {
    "controller": "cert-manager-controller",
    "cainjector": "cert-manager-cainjector",
    "rollouts-controller": "argo-rollouts",
    "hyperkube": "kube-controller-manager",
}


def program_named(name: str) -> Program | None:
    base = name.rsplit("/", 1)[-1]
    if base.endswith("cloud-controller-manager"):
        return PROGRAMS["cloud-controller-manager"]
    return PROGRAMS.get(base) or PROGRAMS.get(ALIASES.get(base, ""))


def unknown(name: str, prefix: str) -> Program:
    return Program(
        name,
        None,
        name,
        prefix,
        ("leader-elect",)
        if prefix == "leader-elect-"
        else ("leader-election", "enable-leader-election"),
        on=True,
    )


# -- recognising ----------------------------------------------------------------------------


def _is_flag(name: str) -> bool:
    return name.startswith(("leader-elect", "leader-election", "enable-leader-election"))


KUBESPRAY = {
    f"kube_{c}_leader_elect_{s.replace('-', '_')}": (c, n)
    for c in ("controller_manager", "scheduler")
    for s, n in zip(SUFFIXES[:2], NAMES[:2], strict=True)
}


def recognise(doc: Document) -> bool:
    if doc.format == "flags":
        return any(_is_flag(f.name) for f in flags_in(doc.roots[0], (0,)))
    if doc.format not in ("yaml", "json"):
        return False
    if any(isinstance(r, dict) and r.get("kind") in HANDLED for r in doc.roots):
        return True
    for path, value in doc.walk():
        key = path[-1] if len(path) > 1 else None
        if key in ("leaderElection", "leaderElectionConfig", "LeaderElection") or (
            isinstance(key, str) and key in KUBESPRAY
        ):
            return True
        if isinstance(value, str) and (
            "--leader-elect" in value or "--enable-leader-election" in value
        ):
            return True
        if key == "name" and value in KUBE_VIP:
            return True
        if isinstance(value, dict) and any(isinstance(k, str) and _is_flag(k) for k in value):
            return True  # kubeadm's extraArgs map
    return False


# -- reading ---------------------------------------------------------------------------------


def read(finder: Finder, client: Mapping[str, Any]) -> list[Elector]:
    doc = finder.doc
    named = client.get("program")
    if doc.format == "flags":
        finder.get((0,))
        program = _named_program(named, "leader-elect-", doc)
        found = _from_flags(finder, program, flags_in(doc.roots[0], (0,)), "")
        return _enabled(doc, [found])
    electors: list[Elector | None] = []
    for i, root in enumerate(doc.roots):
        if not isinstance(root, dict):
            continue
        kind = str(root.get("kind", ""))
        if kind == "KubeSchedulerConfiguration":
            electors.append(
                _from_block(
                    finder, PROGRAMS["kube-scheduler"], (i,), ["leaderElection"], go_duration
                )
            )
        elif kind == "KubeControllerManagerConfiguration":
            finder.notes.append(
                "kube-controller-manager reads no configuration file (it has no "
                "--config flag): this is what its /configz shows, and its flags "
                "are what it runs with"
            )
            electors.append(
                _from_block(
                    finder,
                    PROGRAMS["kube-controller-manager"],
                    (i,),
                    ["Generic", "LeaderElection"],
                    go_duration,
                )
            )
        elif kind in ("ControllerConfiguration", "CAInjectorConfiguration") or (
            not kind and "leaderElectionConfig" in root
        ):
            cainjector = kind.startswith("CAInjector") or "enableInjectableConfig" in root
            which = "cert-manager-cainjector" if cainjector else "cert-manager-controller"
            electors.append(
                _from_block(
                    finder,
                    PROGRAMS[which],
                    (i,),
                    ["leaderElectionConfig"],
                    nanoseconds_or_go,
                    cert_manager=True,
                )
            )
        elif kind == "ClusterConfiguration":
            electors += _kubeadm(finder, i, root)
        elif kind == "KubeControllerManagerConfig":  # OpenShift's
            electors += _openshift(finder, i, root)
        elif kind in ("ControllerManagerConfig", "ControllerManagerConfiguration"):
            electors.append(
                _from_block(finder, PROGRAMS["manager"], (i,), ["leaderElection"], go_duration)
            )
        electors += _workloads(finder, i, named)
        electors += _chart_values(finder, i, root)
        electors += _kubespray(finder, i, root)
    electors += _other_blocks(finder, named)
    return _enabled(doc, electors)


def _named_program(named: object, prefix: str, doc: Document) -> Program:
    if named is None:
        return unknown("a program leadercheck does not know", prefix)
    found = program_named(str(named))
    if found is None:
        raise LeadercheckError(
            f"{doc.source}: leadercheck.program {shown(named)} is none leadercheck knows "
            f"(known: {', '.join(sorted(PROGRAMS))})"
        )
    return found


def _enabled(doc: Document, electors: Sequence[Elector | None]) -> list[Elector]:
    found = [e for e in electors if e is not None]
    if not found and electors:
        raise LeadercheckError(
            f"{doc.source}: leader election is off in every program this "
            "file configures: no claim applies"
        )
    if not found:
        raise LeadercheckError(f"{doc.source}: no program with leader election found")
    return found


def _knobs(values: Mapping[str, Knob | None], program: Program, finder: Finder) -> dict[str, Knob]:
    """The three knobs, each from the file or the program's own default (or unreadable)."""
    knobs = {}
    for i, name in enumerate(NAMES):
        knob = values.get(name)
        if knob is None:
            label = f"--{program.prefix}{SUFFIXES[i]}"
            if program.defaults is None:
                knob = Knob(
                    name,
                    label,
                    None,
                    "not given",
                    True,
                    problem=f"{program.name} "
                    f"sets no {label} and its default is unknown: give the flag, or name "
                    "the program with leadercheck.program",
                )
            else:
                knob = Knob(name, label, program.defaults[i], f"{program.of} default", True)
        knobs[name] = knob
    return knobs


def _from_flags(
    finder: Finder,
    program: Program,
    flags: list[Flag],
    name: str,
    block: Mapping[str, Knob | None] | None = None,
) -> Elector | None:
    """An elector from a command line (and the configuration file its flags override)."""
    doc = finder.doc
    enable = one_flag(flags, list(program.enable), doc)
    if enable is not None and (enable.value or "true").lower() in ("false", "0", "f"):
        finder.notes.append(
            f"--{enable.name}={enable.value} at {doc.where(enable.path)}: "
            f"{program.name}{f' ({name})' if name else ''} elects no leader"
        )
        return None
    prefixes = ("leader-elect-", "leader-election-")
    durations = [f for f in flags if f.name.startswith(prefixes) and f.name.endswith(SUFFIXES)]
    if enable is None and not program.on and not durations:
        return None
    values: dict[str, Knob | None] = dict(block or {})
    for i, knob in enumerate(NAMES):
        flag = one_flag(flags, [p + SUFFIXES[i] for p in prefixes], doc)
        if flag is not None:
            if knob in values and values[knob] is not None:
                finder.notes.append(
                    f"{values[knob].origin} is not used: "  # type: ignore[union-attr]
                    f"--{flag.name} at {doc.where(flag.path)} comes first"
                )
            values[knob] = finder.parsed(
                knob, f"--{flag.name}", flag.value, doc.where(flag.path), go_duration, "s"
            )
    return Elector(program.name, _knobs(values, program, finder), name=name)


def _block(finder: Finder, at: KeyPath, parse: Any) -> dict[str, Knob | None]:
    """A LeaderElectionConfiguration-shaped mapping's durations (fields matched whatever their
    case, as Go's JSON decoding does)."""
    found, block = finder.get(at)
    values: dict[str, Knob | None] = {}
    if not found or not isinstance(block, dict):
        return values
    lowered = {str(k).lower(): k for k in block}
    for name, field_ in zip(NAMES, FIELDS, strict=True):
        key = lowered.get(field_.lower())
        if key is not None:
            finder.get(at + (key,))
            values[name] = finder.parsed(
                name, str(key), block[key], finder.doc.where(at + (key,)), parse, "s"
            )
    return values


def _from_block(
    finder: Finder,
    program: Program,
    at: KeyPath,
    keys: list[str],
    parse: Any,
    cert_manager: bool = False,
) -> Elector | None:
    node: Any = finder.doc.roots[int(at[0])]
    path = at
    for key in keys:  # matched whatever their case
        match = (
            next((k for k in node if str(k).lower() == key.lower()), None)
            if isinstance(node, dict)
            else None
        )
        if match is None:
            return Elector(program.name, _knobs({}, program, finder))
        path, node = path + (match,), node[match]
    values = _block(finder, path, parse)
    if isinstance(node, dict):
        on = next((node[k] for k in node if str(k).lower() in ("leaderelect", "enabled")), True)
        if on is False:
            finder.notes.append(f"{finder.doc.where(path)} turns leader election off")
            return None
    if cert_manager and any(isinstance(node.get(k), int) for k in FIELDS if isinstance(node, dict)):
        finder.notes.append(
            "cert-manager reads a bare number in leaderElectionConfig as nanoseconds"
        )
    return Elector(program.name, _knobs(values, program, finder))


def _workloads(finder: Finder, i: int, named: object) -> list[Elector | None]:
    electors: list[Elector | None] = []
    for path, container in containers(finder.doc):
        if path[0] != i:
            continue
        flags = flags_in(container.get("command"), path + ("command",))
        flags += flags_in(container.get("args"), path + ("args",))
        name = program_of(container)
        program = program_named(name)
        if name == "kube-vip":
            electors.append(_kube_vip(finder, path, container))
            continue
        if program is None and not any(_is_flag(f.name) for f in flags):
            continue
        finder.get(path + ("command",))
        finder.get(path + ("args",))
        if program is None:
            prefix = (
                "leader-election-"
                if any(f.name.startswith("leader-election") for f in flags)
                else "leader-elect-"
            )
            program = _named_program(named, prefix, finder.doc) if named else unknown(name, prefix)
        label = f"container {container.get('name', name)}"
        electors.append(_from_flags(finder, program, flags, label))
    return electors


KUBE_VIP = {
    "vip_leaseduration": "lease_duration",
    "vip_renewdeadline": "renew_deadline",
    "vip_retryperiod": "retry_period",
}


def whole_seconds(value: object, knob: str) -> float:
    """kube-vip's durations: whole seconds as text (strconv.ParseInt, then times a second)."""
    text = (
        str(value).strip() if isinstance(value, str | int) and not isinstance(value, bool) else ""
    )
    if not (text.isdigit() and text.isascii()) or len(text) > 9:
        raise Unreadable(f"{shown(value)} is not a whole number of seconds, all kube-vip reads")
    return float(int(text))


def _kube_vip(finder: Finder, path: KeyPath, container: Mapping[str, Any]) -> Elector | None:
    """kube-vip: leader election from its environment (vip_leaderelection, and its three
    durations in whole seconds: 15/10/2 in its binary)."""
    env = env_of(container, path, finder)
    on = env.get("vip_leaderelection")
    if on is None or str(on[1]).strip().lower() != "true":
        finder.notes.append("kube-vip runs without vip_leaderelection: it elects no leader")
        return None
    values: dict[str, Knob | None] = {}
    for variable, knob in KUBE_VIP.items():
        if variable in env:
            where, value = env[variable]
            finder.get(where)
            values[knob] = finder.parsed(
                knob, variable, value, finder.doc.where(where), whole_seconds, "s"
            )
    program = Program("kube-vip", COMPONENT_BASE, "kube-vip's")
    knobs = _knobs(values, program, finder)
    knobs = {
        n: k
        if not k.default
        else Knob(n, [v for v, m in KUBE_VIP.items() if m == n][0], k.value, k.origin, True)
        for n, k in knobs.items()
    }
    return Elector("kube-vip", knobs, name=f"container {container.get('name', 'kube-vip')}")


def _openshift(finder: Finder, i: int, root: Mapping[str, Any]) -> list[Elector | None]:
    """OpenShift's KubeControllerManagerConfig: `extendedArguments`, each flag a list of
    values, become kube-controller-manager's flags."""
    at = (i, "extendedArguments")
    _, args = finder.get(at)
    if not isinstance(args, dict):
        return []
    flags = []
    for name, values in args.items():
        vals = values if isinstance(values, list) else [values]
        for j, v in enumerate(vals):
            flags.append(Flag(str(name), None if v is None else str(v), at + (name, j)))
            finder.get(at + (name, j))
    return [_from_flags(finder, PROGRAMS["kube-controller-manager"], flags, "extendedArguments")]


def _kubeadm(finder: Finder, i: int, root: Mapping[str, Any]) -> list[Elector | None]:
    """kubeadm's ClusterConfiguration: each component's extraArgs, a map (v1beta3) or a list
    of name/value pairs (v1beta4); kubeadm itself passes --leader-elect=true."""
    electors: list[Elector | None] = []
    for section, program in (
        ("controllerManager", "kube-controller-manager"),
        ("scheduler", "kube-scheduler"),
    ):
        at = (i, section, "extraArgs")
        found, args = finder.get(at)
        flags: list[Flag] = []
        if isinstance(args, dict):
            flags = [
                Flag(str(k), None if v is None else str(v), at + (k,)) for k, v in args.items()
            ]
        elif isinstance(args, list):
            flags = [
                Flag(str(a["name"]), None if a.get("value") is None else str(a["value"]), at + (j,))
                for j, a in enumerate(args)
                if isinstance(a, dict) and "name" in a
            ]
        for flag in flags:
            finder.get(flag.path)
        electors.append(_from_flags(finder, PROGRAMS[program], flags, f"kubeadm's {section}"))
    return electors


def _chart_values(finder: Finder, i: int, root: Mapping[str, Any]) -> list[Elector | None]:
    """cert-manager's chart: `global.leaderElection` becomes the controller's and the
    cainjector's flags (only the durations given), over `config.leaderElectionConfig`."""
    found, block = finder.get((i, "global", "leaderElection"))
    if not found or not ({"cainjector", "webhook", "installCRDs", "crds"} & set(root)):
        return []
    electors: list[Elector | None] = []
    for program, extra, config in (
        ("cert-manager-controller", ("extraArgs",), ("config",)),
        ("cert-manager-cainjector", ("cainjector", "extraArgs"), ("cainjector", "config")),
    ):
        base = _block(finder, (i, *config, "leaderElectionConfig"), nanoseconds_or_go)
        chart = _block(finder, (i, "global", "leaderElection"), go_duration)
        for knob, value in chart.items():
            if knob in base and base[knob] is not None:
                finder.notes.append(
                    f"{base[knob].origin} is not used: "  # type: ignore[union-attr]
                    f"{value.origin if value else ''} comes first (a flag)"
                )
            base[knob] = value
        _, args = finder.get((i, *extra))
        flags = flags_in(args, (i, *extra))
        electors.append(
            _from_flags(finder, PROGRAMS[program], flags, f"the chart's {program}", base)
        )
    return electors


def _kubespray(finder: Finder, i: int, root: Mapping[str, Any]) -> list[Elector | None]:
    """kubespray's inventory variables: lease duration and renew deadline of the controller
    manager and the scheduler (it sets no retry period: theirs, 2 s)."""
    if not any(k in KUBESPRAY for k in root):
        return []
    electors: list[Elector | None] = []
    for component, program in (
        ("controller_manager", "kube-controller-manager"),
        ("scheduler", "kube-scheduler"),
    ):
        values: dict[str, Knob | None] = {}
        for key, (c, name) in KUBESPRAY.items():
            if c == component and key in root:
                values[name] = finder.parsed(
                    name, key, finder.get((i, key))[1], finder.doc.where((i, key)), go_duration, "s"
                )
        electors.append(
            Elector(
                program,
                _knobs(values, PROGRAMS[program], finder),
                name=f"kubespray's {component.replace('_', ' ')}",
            )
        )
    return electors


HANDLED = (
    "KubeSchedulerConfiguration",
    "KubeControllerManagerConfiguration",
    "ControllerConfiguration",
    "CAInjectorConfiguration",
    "ClusterConfiguration",
    "KubeControllerManagerConfig",
    "ControllerManagerConfig",
    "ControllerManagerConfiguration",
)


def _other_blocks(finder: Finder, named: object) -> list[Elector | None]:
    """Any other `leaderElection:` block: component-base's LeaderElectionConfiguration shape,
    whose recommended defaults a program applies if it defaults its configuration."""
    electors: list[Elector | None] = []
    read = {p[: k + 1] for p in finder.looked for k in range(len(p))}
    for path, value in list(finder.doc.walk()):
        if path[-1] != "leaderElection" or path in read or not isinstance(value, dict):
            continue
        root = finder.doc.roots[int(path[0])]
        if isinstance(root, dict) and root.get("kind") in HANDLED:
            continue  # a kind whose block is elsewhere: named as unread, not guessed at
        if not any(normal(str(k)) in LIKE or k == "leaderElect" for k in value):
            continue
        program = (
            _named_program(named, "leader-elect-", finder.doc)
            if named
            else Program(
                "a component's configuration",
                COMPONENT_BASE,
                "component-base's LeaderElectionConfiguration",
            )
        )
        values = _block(finder, path, go_duration)
        on = value.get("leaderElect", True)
        if on is False:
            finder.notes.append(f"{finder.doc.where(path)} turns leader election off")
            continue
        electors.append(
            Elector(program.name, _knobs(values, program, finder), name=f"{finder.doc.where(path)}")
        )
    return electors


# -- semantics --------------------------------------------------------------------------------


def effective(values: dict[str, float], facts: Mapping[str, str]) -> list[str]:
    """The Lease records leaseDuration in whole seconds (LeaseDurationSeconds, truncated)."""
    lease = values["lease_duration"]
    if lease != int(lease):
        values["lease_duration"] = float(int(lease))
        return [
            f"the Lease records leaseDuration {lease:g} s as {int(lease)} s "
            "(LeaseDurationSeconds, truncated): candidates wait that"
        ]
    return []


# client-go's NewLeaderElector refusals (every program ends there), each on its own


def _lease_over_renew(k: Values, facts: Mapping[str, str]) -> str | None:
    lease, renew = k["lease_duration"], k["renew_deadline"]
    if lease <= renew:
        return (
            f"client-go: leaseDuration must be greater than renewDeadline ({lease:g} s <= "
            f"{renew:g} s)"
        )
    return None


def _renew_over_retry(k: Values, facts: Mapping[str, str]) -> str | None:
    renew, retry = k["renew_deadline"], k["retry_period"]
    if renew <= JITTER * retry:
        return (
            f"client-go: renewDeadline must be greater than {JITTER} * retryPeriod "
            f"({renew:g} s <= {JITTER * retry:g} s)"
        )
    return None


def _positive(name: str, field_: str) -> Any:
    def rule(k: Values, facts: Mapping[str, str]) -> str | None:
        if k[name] <= 0:
            return f"client-go: {field_} must be greater than zero ({k[name]:g} s)"
        return None

    return rule


def _whole_second(k: Values, facts: Mapping[str, str]) -> str | None:
    if 0 < k["lease_duration"] < 1:
        return (
            f"the Lease API: leaseDuration {k['lease_duration']:g} s is recorded as 0 s, "
            "which it refuses"
        )
    return None


RULES = (
    _lease_over_renew,
    _renew_over_retry,
    *(_positive(n, f) for n, f in zip(NAMES, FIELDS, strict=True)),
    _whole_second,
)


def timing(facts: Mapping[str, str]) -> Timing:
    return Timing(
        leader="leader",
        believes=lambda v: v["retry_period"] + v["renew_deadline"] + v["dcs_latency"],
        believes_why="retryPeriod + renewDeadline after its last renewal returned (it waits "
        "retryPeriod, then tries for renewDeadline before it stops), up to the store latency "
        "after the API server applied it",
        store_ttl=lambda v: v["lease_duration"],
        store_ttl_why="candidates wait leaseDuration (whole seconds) on their own clock from "
        "when they saw the record change",
        remedy="client-go fences nothing: writes that carry leaseTransitions to a storage that "
        "refuses older ones close it for any pause (verify --protocol k8s-lease-fencing)",
        renew=lambda v: v["retry_period"],
        renew_why="the Lease is renewed every retryPeriod",
        delay=lambda v: v["dcs_latency"],
        holds_for=lambda v: v["retry_period"] + v["renew_deadline"],
        holds_for_why="the leader stops when a renewDeadline window, opened retryPeriod after "
        "its last renewal, passes without one (a pause counts: the window's deadline is a clock)",
        outage=lambda v: v["retry_period"] + v["renew_deadline"],
        outage_why="with the API server out of reach the leader stops leading after a "
        "renewDeadline window without a renewal",
        failover=(
            Term("candidates wait leaseDuration", lambda v: v["lease_duration"]),
            Term(
                "a candidate sees the last renewal up to one poll late (2.2 x retryPeriod)",
                lambda v: JITTER * v["retry_period"] + v["retry_period"],
            ),
            Term(
                "and polls again up to 2.2 x retryPeriod after the lease ran out",
                lambda v: JITTER * v["retry_period"] + v["retry_period"],
            ),
            Term("its read and its update", lambda v: 2 * v["dcs_latency"]),
        ),
    )


LIKE = {
    **{normal(f): n for f, n in zip(FIELDS, NAMES, strict=True)},
    **{
        normal(p + s): n
        for p in ("leader-elect-", "leader-election-")
        for s, n in zip(SUFFIXES, NAMES, strict=True)
    },
    **{normal(k): n for k, (_, n) in KUBESPRAY.items()},
}

SYSTEM = System(
    name="k8s",
    title="Kubernetes (client-go)",
    recognise=recognise,
    read=read,
    like=LIKE,
    effective=effective,
    rules=RULES,
    timing=timing,
    limits=(
        lambda v: v["lease_duration"] > v["renew_deadline"],
        lambda v: v["renew_deadline"] > JITTER * v["retry_period"],
        lambda v: v["retry_period"] > 0,
        lambda v: v["lease_duration"] >= 1,
    ),
    units={"lease_duration": 1.0},  # the Lease records whole seconds
)
