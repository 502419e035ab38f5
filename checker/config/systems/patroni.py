"""Patroni: its YAML (and the operators that write it for you), read by patroni/patroni's
own rules (config.py, ha.py, watchdog/base.py, global_config.py; README "Patroni").

- **Where each knob counts.** `ttl`, `loop_wait` and `retry_timeout` are dynamic
  configuration: the DCS's `/config`, written from `bootstrap.dcs` when the cluster is first
  bootstrapped (a top-level or `<dcs>.ttl` in the local file is not used: config.py copies
  only keys absent from its defaults, and the DCS section's ttl is overwritten).
  `maximum_lag_on_failover`, `synchronous_mode`, `failsafe_mode` and `primary_start_timeout`
  are read from the DCS only (global_config). `watchdog` is local only (a `bootstrap.dcs`
  one is dropped).
- **Values.** The three timings are whole seconds read with `int()`: `"30s"` fails and
  Patroni skips the whole dynamic configuration. Below their minimums (20, 1, 3) they are
  raised, and `loop_wait + 2 * retry_timeout > ttl` lowers loop_wait (and retry_timeout if
  need be), with a warning: never refused.
- **Demotion.** A primary that cannot reach the DCS for retry_timeout demotes itself
  (ha.py `_handle_dcs_error`, `demote('offline')`) unless `failsafe_mode` holds and every
  member answers; its last successful update can be loop_wait + 2 * retry_timeout old by then.
- **Watchdog.** Mode `automatic` (the default) uses /dev/watchdog only if it is there, which
  a file cannot tell; `required` refuses to lead without it. Its timeout is ttl -
  safety_margin (ttl // 2 for -1), and is disabled when that is below loop_wait; Patroni
  keeps it alive right after each successful leader-key update.
- **The DCS.** etcd and etcd3 keep the key `ttl`; Consul is sent ttl/2 and doubles it;
  ZooKeeper's session is `ttl` (negotiated by the server) and kept alive by kazoo's pings;
  on Kubernetes each member reckons the expiry itself, and no event marks it, so replicas
  see it at their next cycle. Elsewhere replicas watch the leader key.
- **Operators.** zalando/postgres-operator copies a `postgresql` manifest's `spec.patroni`
  into `bootstrap.dcs` for Spilo, whose template holds 30/10/10 and a lag of 33554432;
  Spilo's `SPILO_CONFIGURATION` is a Patroni YAML merged over that template. CrunchyData's
  `PostgresCluster` sets ttl from `spec.patroni.leaderLeaseDurationSeconds` and loop_wait
  from `syncPeriodSeconds` (30 and 10), overriding `dynamicConfiguration`, and turns the
  watchdog off; both operators use Kubernetes as the DCS.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from leadercheck.checker.config.document import Document, KeyPath, parse, shown
from leadercheck.checker.config.durations import within
from leadercheck.checker.config.reading import (
    BYTES,
    FLAG,
    Finder,
    Knob,
    Place,
    Unreadable,
    placeholder,
)
from leadercheck.checker.config.systems.base import (
    Elector,
    Reset,
    Rule,
    System,
    Term,
    Timing,
    Values,
)
from leadercheck.checker.config.systems.workloads import containers, env_of
from leadercheck.checker.errors import LeadercheckError

DCS_SECTIONS = ("etcd3", "etcd", "consul", "zookeeper", "exhibitor", "kubernetes", "raft")
DYNAMIC = ("ttl", "loop_wait", "retry_timeout")
GLOBAL = ("maximum_lag_on_failover", "synchronous_mode", "failsafe_mode", "primary_start_timeout")
MINIMUM = {"ttl": 20, "loop_wait": 1, "retry_timeout": 3}
PATRONI = "Patroni's"
REST_TIMEOUT = 2.0  # ha.py fetch_nodes_statuses: each member's REST API, 2 s, no retry
TRUE = ("on", "true", "yes", "1", "y", "t")
FALSE = ("off", "false", "no", "0", "n", "f")


def whole_seconds(value: object, knob: str) -> float:
    """A dynamic timing as Patroni reads it: `int(value)`."""
    if isinstance(value, bool):
        raise Unreadable(f"{value} is not a number of seconds")
    if isinstance(value, int | float):
        if value < 0:
            raise LeadercheckError(f"{knob}: {value:g} must not be negative")
        return within(float(int(within(float(value), knob, value))), knob, value)
    text = str(value).strip() if isinstance(value, str) else ""
    if text.lstrip("+").isdigit() and text.isascii():
        return within(float(int(text)), knob, value)
    raise Unreadable(
        f"{shown(value)} is not a whole number of seconds: Patroni's int() fails on "
        "it and Patroni skips its whole dynamic configuration"
    )


def _parse_int(default: float, what: str) -> Any:
    """A global knob as Patroni's parse_int reads it without a unit: text it cannot read
    is no error to Patroni, which takes its default (said in a note)."""

    def read(value: object, knob: str) -> float:
        if isinstance(value, bool):
            raise Unreadable(f"{value} is not a number of {what}")
        bound = within if what == "seconds" else _bytes
        if isinstance(value, int | float):
            return float(int(bound(float(value), knob, value)))
        text = str(value).strip() if isinstance(value, str) else ""
        if text.lstrip("+-").isdigit() and text.isascii():
            return bound(float(int(text)), knob, value)
        raise Unreadable(
            f"{shown(value)} is not a plain number of {what}: Patroni's parse_int "
            f"reads no unit here and takes its default, {default:g}"
        )

    return read


def _bytes(number: float, knob: str, value: object) -> float:
    if not 0 <= number < 2**63:
        raise LeadercheckError(f"{knob}: {shown(value)} is not a byte count PostgreSQL has")
    return number


def _flag(value: object, knob: str) -> float:
    if isinstance(value, bool):
        return float(value)
    text = str(value).strip().lower()
    if text in TRUE or text == "quorum":  # quorum commit: synchronous, by a quorum of standbys
        return 1.0
    if text in FALSE:
        return 0.0
    raise Unreadable(f"{shown(value)} is not on or off")


# -- recognising the file -----------------------------------------------------------------


def _kind(root: object, api: str, kind: str) -> bool:
    return (
        isinstance(root, dict)
        and root.get("kind") == kind
        and str(root.get("apiVersion", "")).startswith(api)
    )


def _zalando(root: object) -> bool:
    return _kind(root, "acid.zalan.do/", "postgresql")


def _crunchy(root: object) -> bool:
    return _kind(root, "postgres-operator.crunchydata.com/", "PostgresCluster")


def _patroni_yaml(root: object) -> bool:
    if not isinstance(root, dict):
        return False
    keys = set(root)
    return (
        "bootstrap" in keys
        or "loop_wait" in keys
        or ({"scope", "postgresql"} <= keys)
        or ("restapi" in keys and "postgresql" in keys)
    ) and root.get("kind") is None


def _env_names(container: Mapping[str, Any]) -> list[str]:
    env = container.get("env") or container.get("environment")
    if isinstance(env, dict):
        return [str(k) for k in env]
    if isinstance(env, list):
        return [
            str(e.get("name")) if isinstance(e, dict) else str(e).partition("=")[0] for e in env
        ]
    return []


def _spilo(doc: Document) -> list[tuple[KeyPath, Mapping[str, Any]]]:
    """Containers that run Spilo, or Patroni configured by PATRONI_* variables."""
    found = []
    for path, container in containers(doc):
        names = _env_names(container)
        runs = str(container.get("command") or "").split()
        if runs and runs[0].strip("[]'\",") in ("etcd", "sh") and "etcd" in " ".join(runs):
            continue  # the image's other role (Spilo's image also runs etcd)
        if (
            "SPILO_CONFIGURATION" in names
            or "spilo" in str(container.get("image", ""))
            or any(n.startswith("PATRONI_") for n in names)
        ):
            found.append((path, container))
    # the container that carries its configuration first: the one whose timings are shown
    return sorted(found, key=lambda pc: "SPILO_CONFIGURATION" not in _env_names(pc[1]))


def recognise(doc: Document) -> bool:
    root = doc.roots[0]
    if doc.format not in ("yaml", "json"):
        return False
    if any(_zalando(r) or _crunchy(r) for r in doc.roots):
        return True
    return (len(doc.roots) == 1 and (_patroni_yaml(root) or _chart(root))) or bool(_spilo(doc))


def _chart(root: object) -> bool:
    """A Helm chart's values that carry a Patroni configuration under `patroni:`."""
    return (
        isinstance(root, dict)
        and isinstance(root.get("patroni"), dict)
        and ("bootstrap" in root["patroni"] or "postgresql" in root["patroni"])
    )


# -- reading ----------------------------------------------------------------------------------


def read(finder: Finder, client: Mapping[str, Any]) -> list[Elector]:
    doc = finder.doc
    for i, root in enumerate(doc.roots):
        if _zalando(root):
            return [_read_zalando(finder, i)]
        if _crunchy(root):
            return [_read_crunchy(finder, i)]
    if _chart(doc.roots[0]) and not _patroni_yaml(doc.roots[0]):
        finder.notes.append(
            "a chart's values: its patroni section is taken as the Patroni "
            "configuration it renders, Patroni's defaults for what it leaves out"
        )
        return [_read_local(finder, (0, "patroni"), PATRONI, "Patroni (a chart's values)")]
    spilo = _spilo(doc)
    if spilo and not _patroni_yaml(doc.roots[0]):
        return [_read_spilo(finder, *spilo[0])]
    return [_read_local(finder, (0,), PATRONI, "Patroni")]


def _read_local(
    finder: Finder,
    at: KeyPath,
    default_of: str,
    program: str,
    defaults: Mapping[str, float] | None = None,
) -> Elector:
    """A Patroni YAML at `at` (the file's root, or an embedded SPILO_CONFIGURATION); what
    it leaves out is `defaults`' (said to be `default_of`'s), else Patroni's own."""
    given = dict(defaults or DEFAULTS)
    defaults = {**DEFAULTS, **given}

    def whose(name: str) -> str:
        return default_of if name in given else PATRONI

    dcs = _dcs_section(finder, at)
    knobs: dict[str, Knob] = {}
    for name in DYNAMIC:
        places = [
            Place(at + ("bootstrap", "dcs", name)),
            Place(
                at + (name,),
                f"Patroni reads {name} only as dynamic configuration "
                "(bootstrap.dcs, then the DCS), never from the top level",
            ),
            *(
                Place(
                    at + (s, name), f"the {s} section's {name} is overwritten by the dynamic {name}"
                )
                for s in DCS_SECTIONS
            ),
        ]
        knobs[name] = finder.knob(name, name, places, whole_seconds, defaults[name], whose(name))
    for name in GLOBAL:
        aliases = [name, "master_start_timeout"] if name == "primary_start_timeout" else [name]
        places = (
            [Place(at + ("bootstrap", "dcs", a)) for a in aliases]
            + [
                Place(at + (a,), f"Patroni reads {name} from the DCS only (bootstrap.dcs)")
                for a in aliases
            ]
            + [
                Place(
                    at + ("postgresql", name),
                    f"{name} is not a postgresql setting: Patroni "
                    "reads it from the DCS only (bootstrap.dcs)",
                )
            ]
        )
        knobs[name] = _global(finder, name, places, defaults[name], whose(name))
    knobs |= _watchdog(finder, at, whose("safety_margin"))
    facts = {"dcs": dcs, "watchdog": _watchdog_mode(finder, at)}
    return Elector(program, knobs, facts)


DEFAULTS = {
    "ttl": 30.0,
    "loop_wait": 10.0,
    "retry_timeout": 10.0,
    "maximum_lag_on_failover": 1048576.0,
    "synchronous_mode": 0.0,
    "failsafe_mode": 0.0,
    "primary_start_timeout": 300.0,
    "safety_margin": 5.0,
}
KINDS = {
    "maximum_lag_on_failover": BYTES,
    "synchronous_mode": FLAG,
    "failsafe_mode": FLAG,
    "primary_start_timeout": "s",
}


def _global(finder: Finder, name: str, places: list[Place], default: float, of: str) -> Knob:
    kind = KINDS[name]
    parse_ = _flag if kind == FLAG else _parse_int(default, "bytes" if kind == BYTES else "seconds")
    knob = finder.knob(name, name, places, parse_, default, of, kind)
    if knob.value is None and kind != FLAG and "parse_int" in knob.problem:
        finder.notes.append(f"{knob.problem}")
        return Knob(
            name,
            name,
            default,
            f"{of} default, since Patroni cannot read {knob.origin}",
            True,
            kind=kind,
        )
    return knob


def _dcs_section(finder: Finder, at: KeyPath) -> str:
    found = [s for s in DCS_SECTIONS if finder.get(at + (s,))[0]]
    if len(found) > 1:
        finder.notes.append(
            f"the file configures several DCS sections ({', '.join(found)}); "
            f"{found[0]} is taken as the one Patroni uses"
        )
    return found[0] if found else "unknown"


def _watchdog_mode(finder: Finder, at: KeyPath) -> str:
    found, section = finder.get(at + ("watchdog",))
    if finder.get(at + ("bootstrap", "dcs", "watchdog"))[0]:
        finder.notes.append(
            "bootstrap.dcs.watchdog is not used: Patroni takes the watchdog "
            "from the local configuration only"
        )
    if not found or section is None:
        return "automatic"
    if isinstance(section, dict):
        mode = section.get("mode", "automatic")
    else:
        mode = section
    finder.get(at + ("watchdog", "mode"))
    if placeholder(mode):
        return "unknown"
    text = str(mode).strip().lower() if not isinstance(mode, bool) else str(mode).lower()
    if text in ("off", "false", "disable", "disabled"):
        return "off"
    if text in ("auto", "automatic"):
        return "automatic"
    if text in ("require", "required"):
        return "required"
    finder.notes.append(
        f"watchdog mode {shown(mode)} is none Patroni knows: it logs a warning "
        "and turns the watchdog off"
    )
    return "off"


def _watchdog(finder: Finder, at: KeyPath, default_of: str) -> dict[str, Knob]:
    def margin(value: object, knob: str) -> float:
        if isinstance(value, bool) or not isinstance(value, int):
            raise Unreadable(f"{shown(value)} is not a whole number of seconds (or -1)")
        if value < -1:
            raise LeadercheckError(f"{knob}: {value} must be -1 or more")
        return float(value)

    return {
        "safety_margin": finder.knob(
            "safety_margin",
            "watchdog.safety_margin",
            [Place(at + ("watchdog", "safety_margin"))],
            margin,
            DEFAULTS["safety_margin"],
            default_of,
        )
    }


def _read_zalando(finder: Finder, i: int) -> Elector:
    """A zalando/postgres-operator `postgresql` manifest: `spec.patroni` into bootstrap.dcs,
    Spilo's template for what it leaves out."""
    at: KeyPath = (i, "spec", "patroni")
    knobs: dict[str, Knob] = {}
    for name in (*DYNAMIC, *GLOBAL):
        default, of = SPILO.get(name, DEFAULTS[name]), SPILO_OF if name in SPILO else PATRONI
        if name == "failsafe_mode":
            of = "the operator's enable_patroni_failsafe_mode"
        if name in DYNAMIC:
            knobs[name] = finder.knob(
                name, f"spec.patroni.{name}", [Place(at + (name,))], _crd_int, default, of
            )
        else:
            knobs[name] = _global(finder, name, [Place(at + (name,))], default, of)
    knobs["safety_margin"] = Knob(
        "safety_margin", "watchdog.safety_margin", 5.0, f"{PATRONI} default", True
    )
    finder.notes.append(
        "the operator's DCS is Kubernetes unless its configuration names an etcd_host"
    )
    return Elector(
        "postgres-operator (zalando)", knobs, {"dcs": "kubernetes", "watchdog": "automatic"}
    )


def _crd_int(value: object, knob: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int):
        raise Unreadable(f"{shown(value)} is not an integer, which the operator's schema wants")
    if value < 0:
        raise LeadercheckError(f"{knob}: {value} must not be negative")
    return within(float(value), knob, value)


SPILO = {
    "ttl": 30.0,
    "loop_wait": 10.0,
    "retry_timeout": 10.0,
    "maximum_lag_on_failover": 33554432.0,
}
SPILO_OF = "Spilo's template"


def _read_spilo(finder: Finder, path: KeyPath, container: Mapping[str, Any]) -> Elector:
    """A Spilo container: SPILO_CONFIGURATION, a Patroni YAML merged over Spilo's template.
    Or Patroni configured by its PATRONI_* variables, which set none of the timings: they
    come from PATRONI_CONFIGURATION, or from a file this one does not show."""
    env = env_of(container, path, finder)
    if "SPILO_CONFIGURATION" not in env and "spilo" not in str(container.get("image", "")):
        return _read_patroni_env(finder, env)
    if "SPILO_CONFIGURATION" not in env:
        knobs = {
            n: Knob(
                n,
                n,
                SPILO.get(n, DEFAULTS[n]),
                f"{SPILO_OF if n in SPILO else PATRONI} default",
                True,
                kind=KINDS.get(n, "s"),
            )
            for n in (*DYNAMIC, *GLOBAL, "safety_margin")
        }
        return Elector("Spilo", knobs, {"dcs": _spilo_dcs(env), "watchdog": "automatic"})
    where, text = env["SPILO_CONFIGURATION"]
    if not isinstance(text, str):
        raise LeadercheckError(f"{finder.doc.source}: {finder.doc.where(where)} is not text")
    inner = Finder(parse(text, f"{finder.doc.source} ({finder.doc.where(where)})"))
    elector = _read_local(inner, (0,), SPILO_OF, "Spilo", SPILO)
    finder.notes.extend(inner.notes)
    knobs = {n: _relocated(k, finder.doc.where(where)) for n, k in elector.knobs.items()}
    facts = dict(elector.facts)
    if facts["dcs"] == "unknown":
        facts["dcs"] = _spilo_dcs(env)
    return Elector("Spilo", knobs, facts)


def _read_patroni_env(finder: Finder, env: Mapping[str, Any]) -> Elector:
    dcs = next(
        (s for s in DCS_SECTIONS if any(n.startswith(f"PATRONI_{s.upper()}_") for n in env)),
        "unknown",
    )
    if "PATRONI_CONFIGURATION" in env:
        where, text = env["PATRONI_CONFIGURATION"]
        inner = Finder(parse(str(text), f"{finder.doc.source} ({finder.doc.where(where)})"))
        elector = _read_local(inner, (0,), PATRONI, "Patroni")
        finder.notes.extend(inner.notes)
        facts = dict(elector.facts)
        facts["dcs"] = dcs if facts["dcs"] == "unknown" else facts["dcs"]
        return Elector(
            "Patroni",
            {n: _relocated(k, finder.doc.where(where)) for n, k in elector.knobs.items()},
            facts,
        )
    why = (
        "Patroni takes them from its configuration file or PATRONI_CONFIGURATION, and this "
        "file shows neither (PATRONI_* variables set no timing)"
    )
    knobs = {
        n: Knob(n, n, None, "not given", True, problem=why, kind=KINDS.get(n, "s"))
        for n in (*DYNAMIC, *GLOBAL, "safety_margin")
    }
    return Elector("Patroni", knobs, {"dcs": dcs, "watchdog": "unknown"})


def _relocated(knob: Knob, outer: str) -> Knob:
    if knob.default:
        return knob
    return Knob(
        knob.name,
        knob.label,
        knob.value,
        f"{knob.origin} in {outer}",
        False,
        knob.problem,
        knob.kind,
    )


def _spilo_dcs(env: Mapping[str, Any]) -> str:
    names = set(env)
    if names & {"ETCD_HOST", "ETCD_HOSTS", "ETCD_URL", "ETCD3_HOST", "ETCD3_HOSTS"}:
        return "etcd3"
    if names & {"ZOOKEEPER_HOSTS", "EXHIBITOR_HOSTS"}:
        return "zookeeper"
    if "CONSUL_HOST" in names or "CONSUL_URL" in names:
        return "consul"
    if "KUBERNETES_SCOPE_LABEL" in names or "DCS_ENABLE_KUBERNETES_API" in names:
        return "kubernetes"
    return "unknown"


CRUNCHY = "CrunchyData PGO's"


def _read_crunchy(finder: Finder, i: int) -> Elector:
    """A CrunchyData `PostgresCluster`: ttl and loop_wait from their own fields, whatever
    dynamicConfiguration says; the rest from dynamicConfiguration."""
    at: KeyPath = (i, "spec", "patroni")
    dynamic = at + ("dynamicConfiguration",)
    knobs = {
        "ttl": finder.knob(
            "ttl",
            "spec.patroni.leaderLeaseDurationSeconds",
            [
                Place(at + ("leaderLeaseDurationSeconds",)),
                Place(
                    dynamic + ("ttl",),
                    "the operator sets ttl from "
                    "leaderLeaseDurationSeconds, whatever dynamicConfiguration "
                    "says",
                ),
            ],
            _crd_int,
            30.0,
            CRUNCHY,
        ),
        "loop_wait": finder.knob(
            "loop_wait",
            "spec.patroni.syncPeriodSeconds",
            [
                Place(at + ("syncPeriodSeconds",)),
                Place(
                    dynamic + ("loop_wait",),
                    "the operator sets loop_wait "
                    "from syncPeriodSeconds, whatever dynamicConfiguration "
                    "says",
                ),
            ],
            _crd_int,
            10.0,
            CRUNCHY,
        ),
        "retry_timeout": finder.knob(
            "retry_timeout",
            "retry_timeout",
            [Place(dynamic + ("retry_timeout",))],
            whole_seconds,
            10.0,
            PATRONI,
        ),
    }
    for name in GLOBAL:
        aliases = [name, "master_start_timeout"] if name == "primary_start_timeout" else [name]
        knobs[name] = _global(
            finder, name, [Place(dynamic + (a,)) for a in aliases], DEFAULTS[name], PATRONI
        )
    knobs["safety_margin"] = Knob(
        "safety_margin", "watchdog.safety_margin", 5.0, f"{PATRONI} default", True
    )
    return Elector(
        "PostgresCluster (CrunchyData PGO)",
        knobs,
        {"dcs": "kubernetes", "watchdog": "off", "operator": "crunchy"},
    )


# -- what Patroni makes of the values ------------------------------------------------------


def effective(values: dict[str, float], facts: Mapping[str, str]) -> list[str]:
    """Patroni's own adjustment (config.py `_validate_and_adjust_timeouts`): raised to the
    minimums, then loop_wait (and retry_timeout) lowered to keep the rule."""
    notes = []
    for name, least in MINIMUM.items():
        if values[name] < least:
            notes.append(
                f"Patroni raises {name} {values[name]:g} to its minimum {least} (a "
                "warning in its log)"
            )
            values[name] = float(least)
    ttl, loop, retry = values["ttl"], values["loop_wait"], values["retry_timeout"]
    if 1 + 2 * retry > ttl:
        values["loop_wait"], values["retry_timeout"] = 1.0, float((int(ttl) - 1) // 2)
        notes.append(
            f"Patroni runs with loop_wait 1 and retry_timeout "
            f"{values['retry_timeout']:g} to keep loop_wait + 2 * retry_timeout <= ttl"
        )
    elif loop + 2 * retry > ttl:
        values["loop_wait"] = ttl - 2 * retry
        notes.append(
            f"Patroni runs with loop_wait {values['loop_wait']:g} to keep loop_wait + "
            "2 * retry_timeout <= ttl"
        )
    return notes


def watchdog_timeout(v: Values) -> float:
    """The watchdog's timeout: ttl - safety_margin, or ttl // 2 for -1 (watchdog/base.py)."""
    margin = float(v["safety_margin"])
    return float(v["ttl"]) // 2 if margin == -1 else float(v["ttl"]) - margin


def _minimum(name: str) -> Rule:
    least = MINIMUM[name]

    def rule(k: Values, facts: Mapping[str, str]) -> str | None:
        if k[name] < least:
            return (
                f"Patroni: {name} is {k[name]:g} s, below its minimum of {least} s (Patroni "
                "raises it)"
            )
        return None

    return rule


def _loop_rule(k: Values, facts: Mapping[str, str]) -> str | None:
    need = k["loop_wait"] + 2 * k["retry_timeout"]
    if need > k["ttl"]:
        return (
            f"Patroni: loop_wait + 2 * retry_timeout <= ttl is broken: {k['loop_wait']:g} + "
            f"2 * {k['retry_timeout']:g} = {need:g} s > ttl {k['ttl']:g} s (Patroni lowers "
            "loop_wait)"
        )
    return None


def _watchdog_rule(k: Values, facts: Mapping[str, str]) -> str | None:
    if facts.get("watchdog") == "required" and watchdog_timeout(k) < k["loop_wait"]:
        return (
            f"Patroni: the watchdog's timeout ({watchdog_timeout(k):g} s: ttl - "
            f"safety_margin) is below loop_wait ({k['loop_wait']:g} s), so Patroni turns the "
            "watchdog off"
        )
    return None


RULES = (*(_minimum(n) for n in MINIMUM), _loop_rule, _watchdog_rule)


def timing(facts: Mapping[str, str]) -> Timing:
    dcs = facts.get("dcs", "unknown")
    watch = dcs != "kubernetes"
    failover = [Term("the leader key expires ttl after the last update", lambda v: v["ttl"])]
    if watch:
        failover.append(Term("the watch wakes the replicas", lambda v: v["dcs_latency"]))
    else:
        failover.append(
            Term(
                "no event marks the expiry on Kubernetes: the replicas' next cycle",
                lambda v: v["loop_wait"],
            )
        )
    failover += [
        Term("the replica reads the cluster", lambda v: v["dcs_latency"]),
        Term(
            "it asks every other member's REST API (2 s timeout; the dead primary's runs out)",
            lambda v: REST_TIMEOUT,
        ),
        Term("it takes the leader key", lambda v: v["dcs_latency"]),
    ]
    reset = None
    if facts.get("watchdog") == "required":
        reset = Reset(
            lease=lambda v: watchdog_timeout(v) + v["dcs_latency"],
            pause=lambda v: max(
                0.0, min(float(v["pause"]), watchdog_timeout(v) - float(v["loop_wait"]))
            ),
            why="the watchdog resets the node its timeout (ttl - safety_margin) after the "
            "keep-alive Patroni sends right after each leader-key update; a pause between the "
            "update and the keep-alive delays it, and one longer than timeout - loop_wait "
            "lets the previous keep-alive's timer fire first",
        )
    renew_why = "the leader key is updated every loop_wait"
    renew = lambda v: v["loop_wait"]  # noqa: E731
    if dcs == "zookeeper":  # the session lives on kazoo's pings, every max(loop_wait - 2, 2) / 2
        renew = lambda v: max(float(v["loop_wait"]) - 2, 2.0) / 2  # noqa: E731
        renew_why = "kazoo pings every max(loop_wait - 2, 2) / 2 s, which keeps the session"
    return Timing(
        leader="primary",
        believes=lambda v: v["loop_wait"] + 2 * v["retry_timeout"] + v["dcs_latency"],
        believes_why="loop_wait + 2 * retry_timeout after its last leader-key update returned "
        "(the wait, then the DCS read's and the update's retries), up to the store latency after "
        "the DCS applied it; then it demotes PostgreSQL",
        store_ttl=lambda v: v["ttl"],
        store_ttl_why="the leader key's ttl"
        + {
            "consul": " (Consul is sent ttl/2 and doubles it)",
            "zookeeper": " (the ZooKeeper session, as the server negotiates it)",
            "kubernetes": " (each member reckons it from when it saw the key change)",
        }.get(dcs, ""),
        remedy="",
        renew=renew,
        renew_why=renew_why,
        delay=lambda v: v["dcs_latency"],
        outage=lambda v: None if v["failsafe_mode"] else v["loop_wait"] + v["retry_timeout"],
        outage_why="a primary that cannot reach the DCS for retry_timeout demotes itself (no "
        "failsafe_mode), and its next cycle starts at most loop_wait after an update",
        rides_out_why="failsafe_mode: a primary that cannot reach the DCS keeps leading while "
        "every member answers it over the REST API (ha.py _handle_dcs_error)",
        failover=tuple(failover),
        reset=reset,
    )


FENCING = "writes fenced by a token close it for any pause (verify --protocol lease-fencing)"


def advice(v: Values, facts: Mapping[str, str]) -> list[str]:
    """What closes the stale-leader window here: the watchdog with a safety margin that
    covers the stated pause (a whole number of seconds Patroni accepts), or fencing."""
    if facts.get("watchdog") == "off" and facts.get("operator") == "crunchy":
        return ["CrunchyData's operator turns Patroni's watchdog off; " + FENCING]
    margin = least_margin(v)
    said = f"watchdog.safety_margin {v['safety_margin']:g}"
    if facts.get("watchdog") == "required":
        if margin is None:
            return [
                f"the required watchdog cannot cover a {v['pause']:g} s pause with ttl "
                f"{v['ttl']:g} and loop_wait {v['loop_wait']:g}: no safety_margin both "
                "stops the node in time and stays within ttl - loop_wait; " + FENCING
            ]
        return [
            f"{said} is too small for the stated pause: raise it to at least {margin} (its "
            f"timeout, ttl - {margin} = {v['ttl'] - margin:g} s, stays at least loop_wait); "
            + FENCING
        ]
    mode = facts.get("watchdog", "automatic")
    why = (
        "automatic uses /dev/watchdog only if the host has it, which the file cannot tell"
        if mode == "automatic"
        else f"it is {mode}"
    )
    if margin is None:
        return [
            f"the watchdog ({why}) could not cover a {v['pause']:g} s pause with these "
            "timings either; " + FENCING
        ]
    return [
        f"set watchdog: {{mode: required, safety_margin: {margin}}} ({why}; required makes "
        "Patroni refuse to lead without it); " + FENCING
    ]


def least_margin(v: Values) -> int | None:
    """The least whole safety_margin whose watchdog stops a deposed primary before its key
    expires under the stated pause and drift, keeping timeout >= loop_wait; None if none."""
    ttl, loop, latency = float(v["ttl"]), float(v["loop_wait"]), float(v["dcs_latency"])
    rate, pause = float(v["clock_drift"]), float(v["pause"])
    for margin in range(0, int(ttl - loop) + 1):
        timeout = ttl - margin
        cap = max(0.0, min(pause, timeout - loop))
        if (timeout + latency) * (1 + rate) + cap <= ttl:
            return margin
    return None


LIKE = {
    "ttl": "ttl",
    "loopwait": "loop_wait",
    "retrytimeout": "retry_timeout",
    "maximumlagonfailover": "maximum_lag_on_failover",
    "synchronousmode": "synchronous_mode",
    "failsafemode": "failsafe_mode",
    "primarystarttimeout": "primary_start_timeout",
    "masterstarttimeout": "primary_start_timeout",
    "safetymargin": "safety_margin",
    "leaderleasedurationseconds": "ttl",
    "syncperiodseconds": "loop_wait",
}

SYSTEM = System(
    name="patroni",
    title="Patroni",
    recognise=recognise,
    read=read,
    like=LIKE,
    effective=effective,
    rules=RULES,
    timing=timing,
    claims=("rules", "stale-leader", "false-failover", "lost-ack-write"),
    advice=lambda v, facts: advice(v, facts),
    limits=(
        lambda v: v["ttl"] >= MINIMUM["ttl"],
        lambda v: v["loop_wait"] >= MINIMUM["loop_wait"],
        lambda v: v["retry_timeout"] >= MINIMUM["retry_timeout"],
        lambda v: v["loop_wait"] + 2 * v["retry_timeout"] <= v["ttl"],
    ),
    units={"ttl": 1.0, "loop_wait": 1.0, "retry_timeout": 1.0},  # whole seconds (int())
)
