"""The runner on a real Dask distributed cluster (a scheduler and two worker processes here)."""

import os
import signal
import time

import pytest

from icml25.book.run import executor, notebooks, runner
from icml25.book.run.spec import RunSpec
from icml25.common import paths

from test_runner import DECLARED, GOOD

distributed = pytest.importorskip("distributed")

SLOW = GOOD.replace("# %%\nbook.finish()", "# %%\nimport time\ntime.sleep(60)\n\n# %%\nbook.finish()")
QUIET = dict(progress=False, log=lambda *_: None)


@pytest.fixture(scope="module")
def cluster():
    import dask

    # A task whose worker dies is reported at once (the default retries it on another worker).
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                      dashboard_address=None, silence_logs=50) as local:
            yield local


@pytest.fixture
def tree(tmp_path, monkeypatch):
    monkeypatch.setattr(paths, "RUNS", tmp_path / "_build" / "runs")
    for name in ("98-one", "99-two"):
        chapter = tmp_path / "chapters" / name
        chapter.mkdir(parents=True)
        (chapter / "method.py").write_text(GOOD)
        (chapter / "claims.toml").write_text(DECLARED)
    return notebooks.chapters(tmp_path / "chapters")


def claims_of(results):
    import nbformat

    found = {}
    for r in results:
        assert r.ok, r.error
        nb = nbformat.read(paths.ROOT / r.output, as_version=4)
        found[(r.chapter, r.notebook)] = [(c["id"], c["verdict"], c["value"])
                                          for c in nb.metadata["icml25"]["claims"]]
    return found


def test_two_chapters_on_the_cluster_give_the_local_claims(tree, cluster):
    local = runner.run(tree, {"mode": "quick"}, jobs=1, **QUIET)
    expected = claims_of(local)
    for r in local:
        (paths.ROOT / r.output).unlink()
    remote = runner.run(tree, {"mode": "quick"}, scheduler=cluster.scheduler_address, **QUIET)
    assert [r.output for r in remote] == [r.output for r in local]
    assert claims_of(remote) == expected
    # The book-mode run through the cluster publishes next to the source, as a local run does.
    [published] = runner.run(tree[:1], {}, scheduler=cluster.scheduler_address, **QUIET)
    assert published.ok and published.output.endswith("98-one/method.ipynb")


def test_a_worker_killed_mid_run_is_reported_and_the_committed_notebook_kept(tree, cluster):
    one, two = tree
    runner.run([one], {}, **QUIET)
    published = one.path / "method.ipynb"
    before = published.read_bytes()
    (one.path / "method.py").write_text(SLOW)
    client = distributed.Client(cluster.scheduler_address)
    try:
        results = []
        pool_runs = runner.execute_all([RunSpec.of(one.path / "method.py"),
                                        RunSpec.of(two.path / "method.py")],
                                       scheduler=cluster.scheduler_address, **QUIET)
        # Start the run, wait until the slow notebook is executing, then kill its worker.
        first = next(pool_runs)
        results.append(first)
        deadline = time.time() + 60
        while time.time() < deadline:
            busy = [w for w, tasks in client.processing().items() if tasks]
            if busy:
                break
            time.sleep(0.2)
        [victim] = busy
        pid = client.run(os.getpid, workers=[victim])[victim]
        os.kill(pid, signal.SIGKILL)
        results += list(pool_runs)
    finally:
        client.close()
    by_name = {r.chapter: r for r in results}
    assert by_name["99-two"].ok
    assert not by_name["98-one"].ok
    assert "98-one/method.py" in by_name["98-one"].error
    assert "KilledWorker" in by_name["98-one"].error
    assert published.read_bytes() == before


def test_a_worker_with_other_sources_is_refused(tree, cluster, monkeypatch):
    ours = executor.fingerprint()
    changed = {**ours, "packages": {**ours["packages"], "numpy": "0.0.1"}}
    monkeypatch.setattr(executor, "fingerprint", lambda: changed)
    with pytest.raises(executor.WorkerMismatch, match=r"package numpy: .* \(client: 0\.0\.1\)"):
        runner.run(tree, {"mode": "quick"}, scheduler=cluster.scheduler_address, **QUIET)
    assert not any((c.path / "method.ipynb").exists() for c in tree)


def test_a_run_whose_inputs_differ_from_the_checkout_is_not_written(tree):
    [one, _] = tree
    spec = RunSpec.of(one.path / "method.py")
    outcome = runner.run_notebook(spec)
    (one.path / "method.py").write_text(GOOD.replace("A tiny chapter", "Edited meanwhile"))
    result = runner.deliver(spec, outcome)
    assert not result.ok and "than this checkout's" in result.error
    assert not (one.path / "method.ipynb").exists()


def test_no_scheduler_is_a_clear_error():
    with pytest.raises(ValueError, match="no Dask scheduler answers at 'tcp://127.0.0.1:9'"):
        executor.DaskPool("tcp://127.0.0.1:9", connect_s=2)
