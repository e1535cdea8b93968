"""trace.dat from fresh runs: a 4-CPU demo in each buffer mode, decoded to
text and trace.dat; trace-cmd report -t (and --cpu) must list the same
events at the same ns with the same fields, the losses as DROPPED lines
(tests/tools/test_trace_dat.py does the comparing; it checks the captures
kept in tests/tools/captures/ on every `make test-tools`). `make test`
installs trace-cmd (scripts/deps.sh)."""
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "tests" / "tools"))
from test_trace_dat import compare, parse_report, parse_text  # noqa: E402



@pytest.fixture(scope="module")
def decoder(decoder):
    """The session's decoder, and trace-cmd to compare it with."""
    if not shutil.which("trace-cmd"):
        pytest.fail("trace-cmd is not installed: `make deps` installs it")
    return decoder


@pytest.mark.parametrize("mode", ["overwrite", "discard"])
def test_report_of_a_run_matches_the_text(qemu, decoder, tmp_path, mode):
    cap, dat = tmp_path / "serial.bin", tmp_path / "trace.dat"
    r = qemu(f"run=demo exit demo.ms=150 trace.pages=4 trace.mode={mode} dump=bin dump.last=0",
             smp=4, serial=cap)
    assert r.rc == 0, r.out
    d = subprocess.run([str(decoder), str(cap), "--trace-dat", str(dat)], capture_output=True,
                       timeout=120)
    assert d.returncode == 0, d.stderr
    text = parse_text(d.stdout)
    rep = subprocess.run(["trace-cmd", "report", "-t", str(dat)], capture_output=True, timeout=120)
    assert rep.returncode == 0, rep.stderr
    n = compare(text, parse_report(rep.stdout), 0, 4)
    assert n == sum(i[0] == "ev" for i in text) > 1000 and {i[1] for i in text} == {0, 1, 2, 3}
    if mode == "overwrite":
        assert sum(i[0] == "lost" for i in parse_report(rep.stdout)) >= 3
    for cpu in (0, 3):
        one = subprocess.run(["trace-cmd", "report", "-t", "--cpu", str(cpu), str(dat)],
                             capture_output=True, timeout=120)
        assert one.returncode == 0, one.stderr
        mine = [i for i in text if i[1] == cpu]
        assert compare(mine, parse_report(one.stdout), 0, 4) == sum(i[0] == "ev" for i in mine)
