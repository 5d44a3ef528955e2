#!/usr/bin/env python3
"""Checks deploy/ against what Odin needs, without a cluster (none was
available to run them): the Kubernetes manifests parse, the coordinator
listens for hosts on the port its config names and serves gRPC with TLS,
the host agents dial that Service and port with a key and the coordinator's
public key, both mount the same ReadWriteMany volume at the same path, the
sandbox's requirements are stated and granted, the image is Debian 12 built
by the install script, the Slurm script starts a coordinator and a host
agent per node, and the systemd unit runs odin serve. Run by ctest.
"""

import json
import os
import re
import sys

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
problems = []


def check(cond, what):
    if not cond:
        problems.append(what)


def load(name):
    with open(os.path.join(HERE, name)) as f:
        return [d for d in yaml.safe_load_all(f) if d]


def by_kind(docs, kind):
    return [d for d in docs if d.get("kind") == kind]


def container(deployment):
    return deployment["spec"]["template"]["spec"]["containers"][0]


def mounts(deployment):
    return {m["name"]: m["mountPath"] for m in container(deployment).get("volumeMounts", [])}


def volumes(deployment):
    return {v["name"]: v for v in deployment["spec"]["template"]["spec"].get("volumes", [])}


def grants_sandbox(c):
    sc = c.get("securityContext", {})
    unconfined = sc.get("seccompProfile", {}).get("type") == "Unconfined"
    caps = sc.get("capabilities", {}).get("add", [])
    return sc.get("privileged") is True or (unconfined and "SYS_ADMIN" in caps)


coordinator = load("kubernetes/coordinator.yaml")
hosts = load("kubernetes/host-agent.yaml")

# The coordinator.
deps = by_kind(coordinator, "Deployment")
check(len(deps) == 1, "coordinator.yaml: one Deployment")
coord = deps[0]
check(coord["spec"].get("replicas") == 1, "coordinator: exactly one replica (the single authority)")
c = container(coord)
check(c["args"][-3:-1] == ["serve", "--listen"], "coordinator: runs odin serve --listen")
grpc_port = int(c["args"][-1].rsplit(":", 1)[1])
config_map = by_kind(coordinator, "ConfigMap")[0]
config = json.loads(config_map["data"]["odinconfig.json"])
remote = config["workers"]["remote"]
check(remote["launcher"] == "static", "coordinator config: workers.remote.launcher static")
check(remote["listen"].startswith("tcp://"), "coordinator config: workers.remote.listen is tcp://")
hosts_port = int(remote["listen"].rsplit(":", 1)[1])
ports = {p["containerPort"] for p in c["ports"]}
check({hosts_port, grpc_port} <= ports, "coordinator: both ports exposed by the container")
service = by_kind(coordinator, "Service")[0]
service_ports = {p["port"] for p in service["spec"]["ports"]}
check({hosts_port, grpc_port} <= service_ports, "coordinator Service: both ports")
check(set(config.get("serve", {})) >= {"tls_cert", "tls_key"}, "coordinator config: TLS pair for gRPC beyond loopback")
vols = volumes(coord)
m = mounts(coord)
check(vols["keys"]["secret"]["secretName"] and m.get("keys") == remote["keys"], "coordinator: keys Secret mounted where workers.remote.keys says")
for path in (config["serve"]["tls_cert"], config["serve"]["tls_key"]):
    check(path.startswith(m.get("tls", "?") + "/"), "coordinator: TLS pair mounted from its Secret: " + path)
check(any(e["name"] == "ODIN_TOKEN" for e in c.get("env", [])), "coordinator: the gRPC token from a Secret")
pvc = by_kind(coordinator, "PersistentVolumeClaim")[0]
check("ReadWriteMany" in pvc["spec"]["accessModes"], "workspaces volume: ReadWriteMany")
check(grants_sandbox(c), "coordinator: what bubblewrap needs is granted")

# The host agents.
host = by_kind(hosts, "Deployment")[0]
h = container(host)
args = h["args"]
check("host" in args and "--connect" in args, "host agent: runs odin host --connect")
dial = args[args.index("--connect") + 1]
check(dial == "tcp://%s:%d" % (service["metadata"]["name"], hosts_port), "host agent: dials the coordinator Service's hosts port")
keys_dir = args[args.index("--keys") + 1]
hm = mounts(host)
check(hm.get("keys") == keys_dir, "host agent: keys mounted at --keys")
items = [i["path"] for i in volumes(host)["keys"]["secret"]["items"]]
name = args[args.index("--name") + 1]
check("coordinator.pub" in items and "hosts/%s.key" % name in items, "host agent: its key and the coordinator's public key")
check(hm.get("workspaces") == m.get("workspaces"), "host agent: the workspace volume at the coordinator's path")
check(volumes(host)["workspaces"]["persistentVolumeClaim"]["claimName"] == pvc["metadata"]["name"], "host agent: the same claim")
check(args[args.index("-C") + 1] == c["args"][c["args"].index("-C") + 1], "host agent: the same workspace")
check(grants_sandbox(h), "host agent: what bubblewrap needs is granted")
with open(os.path.join(HERE, "kubernetes/host-agent.yaml")) as f:
    text = f.read()
check("Landlock fallback" in text and "user" in text and "namespaces" in text, "host-agent.yaml states the sandbox's needs")

# The image.
with open(os.path.join(HERE, "Dockerfile")) as f:
    docker = f.read()
check(re.search(r"^FROM debian:12", docker, re.M) is not None, "Dockerfile: Debian 12")
check("scripts/install-deps.sh" in docker, "Dockerfile: the install script")
check(str(hosts_port) in docker and str(grpc_port) in docker, "Dockerfile: exposes both ports")

# Slurm and systemd.
with open(os.path.join(HERE, "slurm/odin-cluster.sbatch")) as f:
    sbatch = f.read()
check("srun" in sbatch and "odin -C" in sbatch and " host --connect" in sbatch, "sbatch: host agents by srun")
check("wait_hosts" in sbatch and "-p \"$prompt\"" in sbatch, "sbatch: the coordinator waits for its hosts and runs")
with open(os.path.join(HERE, "systemd/odin-serve.service")) as f:
    unit = f.read()
check(re.search(r"^ExecStart=.*odin .*serve --listen", unit, re.M) is not None, "systemd: ExecStart runs odin serve")
check("RestrictNamespaces=no" in unit, "systemd: namespaces are not restricted (bubblewrap)")

for p in problems:
    print("deploy: " + p)
print("deploy check: %d problem(s)" % len(problems) if problems else "deploy check: manifests, image, Slurm and systemd files hold what Odin needs")
sys.exit(1 if problems else 0)
