"""The crontab line and the Kubernetes CronJob run what the image and the daily script provide."""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

import yaml

from hydroseq.errors import ExitCode

REPO_ROOT = Path(__file__).resolve().parents[2]
PIPELINES = REPO_ROOT / "pipelines"
CRON_FIELD = re.compile(r"^(\*|\d+(-\d+)?)(/\d+)?(,(\*|\d+(-\d+)?)(/\d+)?)*$")


def _script_variables() -> set[str]:
    return set(re.findall(r"\$\{(HYDROSEQ_[A-Z_]+):-", (PIPELINES / "daily_forecast.sh").read_text()))


def _dockerfile() -> tuple[set[str], str]:
    text = (REPO_ROOT / "Dockerfile").read_text()
    volumes = set(yaml.safe_load(re.search(r"^VOLUME (.+)$", text, re.M).group(1)))
    user = re.search(r"^USER (\d+)", text, re.M).group(1)
    return volumes, user


def test_crontab_line(tmp_path: Path) -> None:
    lines = [line for line in (PIPELINES / "crontab").read_text().splitlines() if line and not line.startswith("#")]
    assert len(lines) == 1
    fields = lines[0].split(None, 5)
    assert all(CRON_FIELD.match(field) for field in fields[:5]), fields[:5]
    command = shlex.split(fields[5].split(">>")[0])
    assert command[:2] == ["docker", "run"] and "pipelines/daily_forecast.sh" in command
    mounts = {command[i + 1].split(":")[1] for i, word in enumerate(command) if word == "-v"}
    volumes, _ = _dockerfile()
    assert mounts <= volumes and "/srv/hydroseq/data" in mounts
    env = {command[i + 1].split("=")[0] for i, word in enumerate(command) if word == "-e"}
    assert env <= _script_variables()


def test_cronjob_manifest() -> None:
    manifest = yaml.safe_load((PIPELINES / "cronjob.yaml").read_text())
    assert manifest["apiVersion"] == "batch/v1" and manifest["kind"] == "CronJob"
    spec = manifest["spec"]
    assert all(CRON_FIELD.match(field) for field in spec["schedule"].split())
    assert spec["concurrencyPolicy"] == "Forbid"
    pod = spec["jobTemplate"]["spec"]["template"]["spec"]
    assert pod["restartPolicy"] == "Never"
    volumes, user = _dockerfile()
    assert pod["securityContext"]["runAsNonRoot"] and str(pod["securityContext"]["runAsUser"]) == user
    (container,) = pod["containers"]
    assert container["command"] == ["bash", "pipelines/daily_forecast.sh"]
    env = {item["name"] for item in container["env"]}
    assert {name for name in env if name.startswith("HYDROSEQ_")} <= _script_variables()
    mounted = {mount["name"]: mount["mountPath"] for mount in container["volumeMounts"]}
    declared = {volume["name"] for volume in pod["volumes"]}
    assert set(mounted) == declared
    assert {"/srv/hydroseq/data", "/srv/hydroseq/forecasts"} <= set(mounted.values())
    writable = {mount["mountPath"] for mount in container["volumeMounts"] if not mount.get("readOnly")}
    work_dir = next(item["value"] for item in container["env"] if item["name"] == "HYDROSEQ_WORK_DIR")
    assert f"/srv/hydroseq/{work_dir}" in writable  # scratch must be writable


def test_cronjob_pod_failure_policy_and_restricted_security() -> None:
    """Usage and configuration errors are not retried (the codes of ``ExitCode``), the rest are; the pod
    meets the restricted Pod Security Standard."""
    job = yaml.safe_load((PIPELINES / "cronjob.yaml").read_text())["spec"]["jobTemplate"]["spec"]
    pod = job["template"]["spec"]
    assert pod["restartPolicy"] == "Never"  # required by podFailurePolicy
    rules = job["podFailurePolicy"]["rules"]
    (container,) = pod["containers"]
    by_code = [rule for rule in rules if "onExitCodes" in rule]
    assert [rule["action"] for rule in by_code] == ["FailJob"]
    codes = by_code[0]["onExitCodes"]
    assert codes["containerName"] == container["name"] and codes["operator"] == "In"
    assert codes["values"] == [ExitCode.USAGE, ExitCode.CONFIG]
    assert all(code in {c.value for c in ExitCode} for rule in by_code for code in rule["onExitCodes"]["values"])
    assert {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]} in rules
    security = container["securityContext"]
    assert security["allowPrivilegeEscalation"] is False and security["capabilities"] == {"drop": ["ALL"]}
    assert security["runAsNonRoot"] is True and pod["securityContext"]["runAsNonRoot"] is True
    assert security["seccompProfile"] == pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    assert int(pod["securityContext"]["runAsUser"]) != 0
    assert all(set(volume) - {"name"} <= {"persistentVolumeClaim", "emptyDir"} for volume in pod["volumes"])


def test_the_daily_job_exits_with_hydroseqs_table() -> None:
    script = (PIPELINES / "daily_forecast.sh").read_text()
    constants = dict(re.findall(r"\bEXIT_([A-Z_]+)=(\d+)", script))
    assert constants and {name: int(code) for name, code in constants.items()} == {
        name: ExitCode[name].value for name in constants}
    assert not re.search(r"\bfail \d", script), "exit statuses by name (EXIT_...), not by number"


def test_scripts_parse() -> None:
    for script in ("daily_forecast.sh", "demo.sh"):
        result = subprocess.run(["bash", "-n", str(PIPELINES / script)], capture_output=True, text=True)
        assert result.returncode == 0, result.stderr
