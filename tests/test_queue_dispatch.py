"""The queue's dispatcher (engine/durable/queue.py ``dispatch``, issue 26
point 4): claimed jobs run ``concurrency`` at once, each exactly once; a job
queued while others run is started without waiting for them; past the
deadline nothing new starts and the running jobs end; a job that fails
outside its run does not stop the others. The jobs here are plain Python
(the processor's claims and runs on real connections are checked by
dev/connections_check.py's queued case)."""
import threading
import time
from collections import Counter

from odoo.tests import BaseCase, tagged

from ..engine.durable.queue import MAX_CONCURRENCY, QueueSettings, dispatch


class Jobs:
    """A queue of job ids: ``claim`` pops the next one ready, ``run`` sleeps
    ``seconds`` and counts how many run at once."""

    def __init__(self, ids, seconds=0.2):
        self.ready, self.seconds = list(ids), seconds
        self.lock = threading.Lock()
        self.ran, self.threads = Counter(), set()
        self.running = self.most = 0
        self.claimer_threads = set()

    def claim(self):
        self.claimer_threads.add(threading.get_ident())
        with self.lock:
            return self.ready.pop(0) if self.ready else None

    def run(self, job):
        with self.lock:
            self.running += 1
            self.most = max(self.most, self.running)
            self.threads.add(threading.get_ident())
        time.sleep(self.seconds)
        with self.lock:
            self.running -= 1
            self.ran[job] += 1


@tagged("post_install", "-at_install")
class TestQueueDispatch(BaseCase):

    def test_jobs_run_concurrency_at_once_each_exactly_once(self):
        jobs, done = Jobs(range(10)), []
        started = time.monotonic()
        count = dispatch(jobs.claim, jobs.run, 3, time.monotonic() + 60, on_done=done.append)
        wall = time.monotonic() - started
        self.assertEqual(count, 10)
        self.assertEqual(jobs.ran, Counter(dict.fromkeys(range(10), 1)))
        self.assertEqual(jobs.most, 3)
        self.assertEqual(sum(done), 10)
        self.assertEqual(jobs.claimer_threads, {threading.get_ident()}, "claims are made in the caller's thread")
        self.assertLess(wall, 10 * 0.2, "the jobs ran side by side, not one after the other")

    def test_one_at_a_time_runs_in_the_callers_thread(self):
        jobs = Jobs(range(3), seconds=0)
        self.assertEqual(dispatch(jobs.claim, jobs.run, 1, time.monotonic() + 60), 3)
        self.assertEqual(jobs.threads, {threading.get_ident()})

    def test_a_job_queued_while_others_run_starts_before_they_end(self):
        jobs = Jobs([1, 2], seconds=1.0)
        late_started = []

        def run(job):
            if job == 3:
                late_started.append(time.monotonic())
                return
            jobs.run(job)

        def queue_later():
            time.sleep(0.2)
            with jobs.lock:
                jobs.ready.append(3)
        threading.Thread(target=queue_later).start()
        started = time.monotonic()
        self.assertEqual(dispatch(jobs.claim, run, 4, time.monotonic() + 60, poll=0.05), 3)
        self.assertLess(late_started[0] - started, 0.8, "job 3 waited for the long runs to end")

    def test_past_the_deadline_nothing_starts_and_running_jobs_end(self):
        jobs = Jobs(range(10), seconds=0.5)
        count = dispatch(jobs.claim, jobs.run, 2, time.monotonic() + 0.2)
        self.assertEqual(count, 2, "only the jobs started before the deadline")
        self.assertEqual(sum(jobs.ran.values()), 2, "the running jobs were not left half-done")
        self.assertEqual(len(jobs.ready), 8)

    def test_limit(self):
        jobs = Jobs(range(10), seconds=0)
        self.assertEqual(dispatch(jobs.claim, jobs.run, 4, time.monotonic() + 60, limit=5), 5)
        self.assertEqual(len(jobs.ready), 5)

    def test_a_job_that_fails_outside_its_run_leaves_the_others_running(self):
        jobs = Jobs(range(4), seconds=0.05)

        def run(job):
            if job == 1:
                raise RuntimeError("a bug of the queue")
            jobs.run(job)
        with self.assertLogs("odoo.addons.agentic_ai.engine.durable.queue", "ERROR"):
            self.assertEqual(dispatch(jobs.claim, run, 2, time.monotonic() + 60), 4)
        self.assertEqual(set(jobs.ran), {0, 2, 3})

    def test_the_setting_is_bounded(self):
        def settings(value):
            return QueueSettings.from_params({"agentic_ai.queue_concurrency": value}.get).concurrency
        self.assertEqual(settings(None), 4)
        self.assertEqual(settings("0"), 1)
        self.assertEqual(settings("-3"), 1)
        self.assertEqual(settings("8"), 8)
        self.assertEqual(settings("1e9"), MAX_CONCURRENCY)
        self.assertEqual(settings("inf"), 4)
        self.assertEqual(settings("many"), 4)
