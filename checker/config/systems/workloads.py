"""Where a program's command line and environment sit in the files that start it: a
Kubernetes workload (a Pod, or the Pod template of a Deployment, StatefulSet, DaemonSet, Job,
CronJob or ReplicaSet; a kubeadm static Pod manifest is a Pod) and a Compose service.

Every system whose program is started this way (a controller's leader-election flags, an
etcd member's flags and `ETCD_*` variables, Spilo's `SPILO_CONFIGURATION`) reads its
containers through here, so the shapes are known in one place.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterator, Mapping
from typing import Any

from leadercheck.checker.config.document import Document, KeyPath
from leadercheck.checker.config.reading import Finder

POD_SPECS: tuple[tuple[str, ...], ...] = (
    ("spec",),  # a Pod
    ("spec", "template", "spec"),  # Deployment, StatefulSet, DaemonSet, Job, ReplicaSet
    ("spec", "jobTemplate", "spec", "template", "spec"),  # CronJob
)


def containers(doc: Document) -> Iterator[tuple[KeyPath, Mapping[str, Any]]]:
    """(path, container) for each container of each workload in the file, in file order
    (init containers left out: they run before any election)."""
    for i, root in enumerate(doc.roots):
        if not isinstance(root, dict):
            continue
        for spec_path in POD_SPECS:
            spec: Any = root
            for key in spec_path:
                spec = spec.get(key) if isinstance(spec, dict) else None
            if isinstance(spec, dict) and isinstance(spec.get("containers"), list):
                for j, container in enumerate(spec["containers"]):
                    if isinstance(container, dict):
                        yield (i, *spec_path, "containers", j), container
                break
        services = root.get("services")
        if isinstance(services, dict):  # Compose
            for name, service in services.items():
                if isinstance(service, dict) and ("image" in service or "build" in service):
                    yield (i, "services", name), service


SHELLS = ("sh", "bash", "dash", "ash")


def program_of(container: Mapping[str, Any]) -> str:
    """The program a container runs: its command's first word (through `sh -c "exec prog
    ..."`), else its image's name."""
    command = container.get("command")
    words = (
        [str(c) for c in command]
        if isinstance(command, list)
        else [str(command)]
        if isinstance(command, str)
        else []
    )
    if words and words[0].split():
        first = words[0].split()[0].rsplit("/", 1)[-1]
        if first in SHELLS:
            args = container.get("args")
            more = [str(a) for a in args] if isinstance(args, list) else []
            script = " ".join(w for w in words[1:] + more if w != "-c")
            try:
                tokens = shlex.split(script, comments=True)
            except ValueError:
                tokens = script.split()
            tokens = [t for t in tokens if t.strip()]
            if "exec" in tokens:  # the program the script ends in
                after = tokens[len(tokens) - tokens[::-1].index("exec") :]
                tokens = after or tokens
            runs = [t for t in tokens if not t.startswith("-") and "=" not in t]
            if runs and runs[0].rsplit("/", 1)[-1] == "hyperkube" and len(runs) > 1:
                runs = runs[1:]
            if runs:
                name = runs[0].rsplit("/", 1)[-1]
                return "kube-scheduler" if name == "scheduler" else name
        elif first == "hyperkube" and len(words) > 1:  # `hyperkube kube-scheduler ...`
            return words[1].split()[0]
        elif not first.startswith("-"):
            return first
    image = str(container.get("image", ""))
    name = image.rsplit("/", 1)[-1].split("@", 1)[0].split(":", 1)[0]
    return name or str(container.get("name", ""))


def env_of(
    container: Mapping[str, Any], path: KeyPath, finder: Finder
) -> dict[str, tuple[KeyPath, Any]]:
    """A container's environment by name: (path, value). Kubernetes' `env` list of
    name/value pairs or Compose's `environment` (a list of `K=V`, or a mapping)."""
    found: dict[str, tuple[KeyPath, Any]] = {}
    for key in ("env", "environment"):
        present, env = finder.get(path + (key,))
        if not present:
            continue
        if isinstance(env, list):
            for i, item in enumerate(env):
                if isinstance(item, dict) and "name" in item:
                    value = item.get("value", "$(valueFrom)" if "valueFrom" in item else "")
                    found[str(item["name"])] = (path + (key, i), value)
                elif isinstance(item, str) and "=" in item:
                    name, _, value = item.partition("=")
                    found[name] = (path + (key, i), value)
        elif isinstance(env, dict):
            for name, value in env.items():
                found[str(name)] = (path + (key, name), value)
    return found
