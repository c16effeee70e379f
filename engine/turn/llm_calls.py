"""One model answer per call, from the run's providers in order (spec 000
§4.5): retries, fallback, streaming relay, and the ``llm_call`` log rows.

When the run has a listener (``emit``) and the provider streams, the answer
is read from the provider's stream and each text delta is relayed as a
``token`` event as it arrives (issue 10 point 2). The run's ``should_stop``
is asked between chunks: when it says stop, the provider's stream is
closed at once (the HTTP connection with it) and ``Interrupted`` carries
the partial answer, with its usage estimated by the provider's tokenizer
and flagged so (providers report usage only at the end of a stream)."""
from __future__ import annotations

import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext

from odoo.tools import config

from ...llm import LLMError, LLMResponse
from ..guard import provider_rate
from .run_context import ProviderSpec
from .turn_limits import TurnLimitReached

ATTEMPTS_PER_PROVIDER = 2          # spec 000 §4.5
MAX_RETRY_AFTER = 10.0             # seconds: longest Retry-After we wait for
SERVER_MARGIN = 10.0               # seconds kept free below the Odoo server's own time limit on the request
MIN_CALL_SECONDS = 5.0             # a call is not started with less time than this left


def server_time_left() -> float | None:
    """Seconds the Odoo server still lets the current request or cron job
    run before it restarts the server or kills the worker: ``limit_time_real``
    (``limit_time_real_cron`` for a cron thread when set) less what the
    thread has run (odoo/service/server.py, ``ThreadedServer.process_limit``
    and the prefork watchdog); None when no limit applies (a limit of 0, or
    a thread the server does not time, such as a test or a shell)."""
    thread = threading.current_thread()
    limit = config.get("limit_time_real") or 0
    if getattr(thread, "type", None) == "cron" and (config.get("limit_time_real_cron") or 0) > 0:
        limit = config["limit_time_real_cron"]
    if limit <= 0:
        return None
    started = getattr(thread, "start_time", None)
    if started:
        return limit - (time.time() - started)
    if (config.get("workers") or 0) > 0 and thread is threading.main_thread() and _in_http_request():
        return float(limit)  # a prefork HTTP worker: the request, and this run, started about now
    return None  # a prefork cron worker runs many jobs between two watchdog pings: its limit is not this run's


def _in_http_request() -> bool:
    from odoo.http import request

    return bool(request)


class LLMUnavailable(Exception):
    """Every provider failed; ``errors`` lists ``"provider: message"``;
    ``refused``: each provider refused the request itself (a 4xx: a bad key,
    model or request), so trying again the same way will not help."""

    def __init__(self, errors: list[str], refused: bool = False, rate_limited: bool = False):
        super().__init__("; ".join(errors))
        self.errors = errors
        self.refused = refused
        self.rate_limited = rate_limited  # every provider was at its own requests-a-minute limit


class ContextOverflow(LLMUnavailable):
    """A provider said the request holds more tokens than its model reads
    (``LLMError.context_overflow``): the history must be trimmed before the
    call is made again (issue 24 point 2)."""


class Interrupted(Exception):
    """The run was asked to stop while the model was answering.
    ``response`` is the partial answer (content so far, no tool calls,
    estimated usage), already logged."""

    def __init__(self, response: LLMResponse):
        super().__init__("interrupted")
        self.response = response


class LLMCaller:
    """Calls the providers of a run (``context.providers``), logging every
    attempt in ``audit`` and costs in ``tracker``.

    ``emit(event, data)`` receives ``token`` events (``{"text": str}``, or
    ``{"reset": True}`` when a failed stream's text must be discarded
    before a retry); ``should_stop()`` is asked between streamed chunks;
    ``waiting()`` is a context manager entered for each answer's wait on
    the providers (retries and fallback included), inside which nothing of
    this class touches the database (the runtime gives its connection back
    there: engine/durable/step_connection.py). ``reserve(provider) ->
    seconds`` takes a slot of a provider's own requests-a-minute limit
    before each request (engine/guard/provider_rate.py ``reserver``, on a
    connection of its own): 0.0 when taken, else the seconds until one may
    be; then the next provider is asked, or, for the last one, the request
    waits up to ``provider_rate.MAX_WAIT_SECONDS`` (and the turn's time).

    One per turn: it counts the turn's answers and its clock starts when it
    is created, bounding every mode's turn to ``context.max_llm_calls``
    answers and ``context.max_run_seconds`` seconds (issue 12 point 4)."""

    def __init__(self, context, audit, tracker, retry_delay: float,
                 emit: Callable[[str, dict], None] | None = None, should_stop: Callable[[], bool] | None = None,
                 waiting: Callable[[], AbstractContextManager] | None = None,
                 reserve: Callable[[ProviderSpec], float] | None = None):
        self.context = context
        self.reserve = reserve or (lambda provider: 0.0)
        self.waiting = waiting or nullcontext
        self.audit = audit
        self.tracker = tracker
        self.retry_delay = retry_delay
        self.emit = emit
        self.should_stop = should_stop or (lambda: False)
        self.started = time.monotonic()
        self.calls = 0  # answers asked for in this turn (retries and fallback of one answer count once)
        # Each message's request text, made once per turn (llm/base.py ``_messages_json``): the transcript keeps
        # its message objects for the turn, and each call sends the earlier ones again.
        self.wire_cache: dict = {}
        left = server_time_left()
        # The provider's timeout, the retries and the turn's budget all end before the server's own limit.
        self.server_deadline = self.started + left - SERVER_MARGIN if left is not None else None

    def seconds_left(self) -> float | None:
        """Seconds before the server's limit, less SERVER_MARGIN (None: no limit)."""
        return None if self.server_deadline is None else self.server_deadline - time.monotonic()

    def check_bounds(self) -> None:
        """Raise TurnLimitReached when one more LLM call would exceed the
        turn's ``max_llm_calls``, or its ``max_run_seconds`` have passed."""
        limit = self.context.max_llm_calls
        if self.calls >= limit:
            raise TurnLimitReached(
                f"I stopped before finishing: this request reached its limit of {limit} calls to the AI model. "
                "What I did so far is above; tell me how to continue, or split the request into smaller ones.",
                f"LLM call limit reached: {limit} calls per user message")
        left = self.seconds_left()
        if left is not None and left < MIN_CALL_SECONDS:
            raise TurnLimitReached(
                "I stopped before finishing: this request reached the time Odoo gives one request (its "
                "limit_time_real setting). What I did so far is above; tell me how to continue, or ask an "
                "administrator to raise that limit for slow models.",
                f"server time limit reached: {left + SERVER_MARGIN:.1f} s left of the request's limit")
        seconds = self.context.max_run_seconds
        elapsed = time.monotonic() - self.started
        if elapsed >= seconds:
            raise TurnLimitReached(
                f"I stopped before finishing: this request reached its time limit of {seconds} seconds. "
                "What I did so far is above; tell me how to continue, or split the request into smaller ones.",
                f"time limit reached: {elapsed:.1f} s of {seconds} s per user message")

    def answer(self, messages: list[dict], schemas: list[dict], normalize,
               relay: bool = True) -> tuple[LLMResponse, list]:
        """``(response, calls)``: the answer of the primary provider, else of
        the fallback, ``ATTEMPTS_PER_PROVIDER`` tries each (client errors,
        4xx but 429, go straight to the next provider), and its tool calls
        as ``normalize(calls)`` returns them (final ids); a failed stream is
        tried again as a plain call (whose answer is relayed whole). ``relay=False``:
        the answer is not the user's to read (a plan, a step's call), so it
        is not streamed to the listener. Raises LLMUnavailable with every
        provider's last error, ContextOverflow when a provider said the
        request is too long for its model and no other answered, Interrupted, and TurnLimitReached
        (before any request) when the turn's bounds are reached
        (``check_bounds``)."""
        self.check_bounds()
        self.calls += 1
        with self.waiting():
            return self._answer(messages, schemas, normalize, relay)

    def _answer(self, messages, schemas, normalize, relay) -> tuple[LLMResponse, list]:
        """``answer`` inside the wait: nothing here touches the database."""
        errors, refusals, overflowed, limited = [], 0, 0, 0
        providers = self.context.providers
        for index, provider in enumerate(providers):
            if provider.adapter is None:
                errors.append(f"{provider.name}: {provider.problem}")
                continue
            last, stream = "", relay and self.emit and provider.adapter.config.supports_streaming
            for attempt in range(ATTEMPTS_PER_PROVIDER):
                full = self._slot(provider, is_last=index == len(providers) - 1)
                if full:
                    last = full
                    limited += 1
                    break
                started = time.monotonic()
                timeout = provider.adapter.config.timeout
                left = self.seconds_left()
                if left is not None:
                    if left < MIN_CALL_SECONDS:
                        last = last or f"{provider.name}: no time left before the request's time limit"
                        break
                    timeout = min(timeout, left)
                try:
                    # Adapters raise LLMError only (llm.base wraps every adapter method).
                    if stream:
                        response = self._streamed(provider, messages, schemas, started, timeout)
                    else:
                        response = provider.adapter.chat_completion(messages, schemas or None, timeout=timeout,
                                                                    wire_cache=self.wire_cache)
                        if relay and self.emit and response.content and not response.tool_calls:
                            self.emit("token", {"text": response.content})  # a stream retried as a plain call
                except LLMError as exc:
                    billed = {}  # a stream broken mid-answer was billed for what it sent: estimated
                    if exc.usage is not None:
                        cost = self.tracker.track_usage(exc.usage, provider.prices)
                        billed = {**exc.usage.log_values(), "cost": cost}
                    self.audit.record("llm_call", provider_id=provider.id, llm_model=provider.model, success=False,
                                      error_message=str(exc), duration_ms=_ms(started), **billed)
                    last = f"{provider.name}: {exc}"
                    if exc.context_overflow:  # too long for this model: the fallback may read more
                        overflowed += 1
                        break
                    if not exc.retryable:
                        refusals += 1
                        break
                    stream = False  # a failed stream (an empty 200 included) is tried once more as a plain call
                    if attempt + 1 < ATTEMPTS_PER_PROVIDER:
                        wait = exc.retry_after if exc.retry_after is not None else self.retry_delay
                        time.sleep(max(0.0, min(wait, MAX_RETRY_AFTER)))
                    continue
                calls = normalize(response.tool_calls)
                self._log(provider, response, calls, started)
                return response, calls
            errors.append(last)
        if not errors:
            errors.append("the agent has no LLM provider")
        if overflowed:
            raise ContextOverflow(errors)
        raise LLMUnavailable(errors, refused=bool(refusals) and refusals == len(errors),
                             rate_limited=bool(limited) and limited == len(errors))

    def _slot(self, provider: ProviderSpec, is_last: bool) -> str:
        """Take a slot of ``provider``'s own requests-a-minute limit
        (``rate_limit_rpm``) for one request: ``""`` when taken, else why
        the provider is not asked (logged). Another provider follows: it is
        asked at once; the last one is waited for, without a database
        connection, up to ``provider_rate.MAX_WAIT_SECONDS`` and the time
        the turn has left."""
        wait = self.reserve(provider)
        if not wait:
            return ""
        limit = provider.rate_limit_rpm
        waited = 0.0
        bound = 0.0
        if is_last:
            bound = provider_rate.MAX_WAIT_SECONDS
            left = self.seconds_left()
            if left is not None:
                bound = min(bound, left - MIN_CALL_SECONDS)
            bound = min(bound, self.context.max_run_seconds - (time.monotonic() - self.started) - MIN_CALL_SECONDS)
            while wait and waited + wait <= bound:
                time.sleep(wait)
                waited += wait
                wait = self.reserve(provider)
            if not wait:
                return ""
        reached = (f"{provider.name}: its limit of {limit} requests a minute (Rate Limit (RPM) on the provider) "
                   "is reached")
        if not is_last:
            why = f"{reached}, so the next provider was asked"
        elif waited:
            why = f"{reached} still after waiting {waited:.0f} s; a slot frees in about {wait:.0f} s"
        else:
            why = (f"{reached}; a slot frees in about {wait:.0f} s, longer than a request waits "
                   f"({max(bound, 0):.0f} s)")
        # Not an llm_call row: no request was sent, and those rows are the requests the per-user limits count.
        self.audit.record("error", provider_id=provider.id, llm_model=provider.model, success=False,
                          level="warning", error_message=why)
        return why

    def _streamed(self, provider: ProviderSpec, messages: list[dict], schemas: list[dict],
                  started: float, timeout: float) -> LLMResponse:
        """The provider's streamed answer, relayed token by token (``timeout``:
        seconds of one network wait). Raises LLMError (after a ``reset``
        event when text was relayed, with the estimated ``usage`` of that
        text; not retryable when the request's time limit is near) and
        Interrupted."""
        adapter = provider.adapter
        parts, final = [], None
        stream = adapter.chat_completion_stream(messages, schemas or None, timeout=timeout, wire_cache=self.wire_cache)
        try:
            for chunk in stream:
                if chunk.content:
                    parts.append(chunk.content)
                    self.emit("token", {"text": chunk.content})
                left = self.seconds_left()
                if left is not None and left <= 0 and chunk.finish_reason is None:  # retried only if time is left
                    raise LLMError("the answer was still streaming when the request's time limit came near",
                                   retryable=True)
                if chunk.finish_reason is not None:
                    final = chunk
                elif self.should_stop():
                    stream.close()  # closes the HTTP response: the provider sees the drop at its next write
                    partial = LLMResponse(
                        content="".join(parts), tool_calls=[], model=adapter.config.model, finish_reason="interrupted",
                        usage=adapter.usage(messages, schemas, "".join(parts), []))
                    self._log(provider, partial, [], started, error="interrupted before the answer was complete")
                    raise Interrupted(partial)
        except LLMError as exc:
            if parts:
                self.emit("token", {"reset": True})
                exc.usage = adapter.usage(messages, schemas, "".join(parts), [])
            raise
        finally:
            stream.close()
        if final is None:
            raise LLMError("the stream ended without a final chunk", retryable=True)
        usage = final.usage or adapter.usage(messages, schemas, "".join(parts), final.tool_calls)
        return LLMResponse(content="".join(parts) or None, tool_calls=final.tool_calls, usage=usage,
                           model=final.model or adapter.config.model, finish_reason=final.finish_reason)

    def _log(self, provider: ProviderSpec, response: LLMResponse, calls, started: float, error: str = "") -> None:
        cost = self.tracker.track_usage(response.usage, provider.prices)
        self.audit.record("llm_call", provider_id=provider.id, llm_model=response.model,
                          **response.usage.log_values(), cost=cost,
                          duration_ms=_ms(started), **({"success": False, "error_message": error} if error else {}),
                          output_data={"content": response.content, "finish_reason": response.finish_reason,
                                       "tool_calls": [{"id": c.id, "name": c.name, "arguments": c.raw_arguments}
                                                      for c in calls]})


def retry_delay(env) -> float:
    """Seconds between two attempts at one provider: the system parameter
    ``agentic_ai.llm_retry_delay`` (default 1, spec §4.5; tests set it
    lower), never negative."""
    raw = env["ir.config_parameter"].sudo().get_param("agentic_ai.llm_retry_delay", "1.0")
    try:
        return max(0.0, float(raw))
    except ValueError:
        return 1.0


def _ms(started: float) -> int:
    return int((time.monotonic() - started) * 1000)
