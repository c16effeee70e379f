"""Persistent memory of the agents (spec 000 §3.6, §8; issue 12 point 5).

A memory is one fact (semantic), one conversation summary (episodic) or one
way of working (procedural), kept for one user (scope ``user``), for one
conversation of that user (scope ``thread``) or for everyone (scope
``global``, written by operators only: security/agentic_ai_rules.xml).
``store`` upserts by key; ``recall`` ranks what a user may see by keyword
match, importance and recency; ``forget_expired`` is the daily cleanup."""
import logging
import math
import re
from datetime import timedelta

import psycopg2

from odoo import SUPERUSER_ID, api, fields, models
from odoo.exceptions import AccessError, ValidationError
from odoo.tools import SQL

from ..engine.memory_manager import CONSOLIDATION_SOURCE
from ..engine.text.clean_text import CJK_RE, clean_text

_logger = logging.getLogger(__name__)

DEFAULT_EPISODIC_DAYS = 30         # TTL of an episodic memory unless agentic_ai.memory_episodic_days says otherwise
RECENCY_HALF_LIFE_DAYS = 30.0      # a memory untouched this long counts half as recent
# A semantic memory's importance halves with every this many days since it was last written, stored again or edited
# (spec §8.1: long-term memories persist, their importance decays): a preference or fact nobody restated in half a
# year weighs half. Shared (global) memories decay too.
IMPORTANCE_HALF_LIFE_DAYS = 180.0
WEIGHTS = (0.5, 0.3, 0.2)          # keyword match, importance, recency (spec §8.3)
MAX_KEY_CHARS = 100
MAX_CONTENT_CHARS = 2000
MAX_QUERY_CHARS = 20000            # of a recall query read (a user message is at most as long)
MAX_QUERY_TERMS = 100              # terms of a query matched: recall is callable over RPC, with any query
# Words that say nothing about what is asked for (English; Chinese is matched by bigrams).
STOP_WORDS = frozenset({
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "could", "do", "does", "for", "from", "has", "have",
    "how", "i", "in", "is", "it", "me", "my", "of", "on", "or", "our", "please", "should", "that", "the", "their",
    "them", "then", "there", "this", "to", "us", "was", "we", "what", "when", "where", "which", "who", "why", "will",
    "with", "would", "you", "your"})
_WORD = re.compile(r"\w+")


def normalize_key(key) -> str:
    """The upsert key as stored: stripped, lower case, inner whitespace
    collapsed to one space, at most MAX_KEY_CHARS characters."""
    return " ".join(clean_text(key).lower().split())[:MAX_KEY_CHARS]


def query_terms(query) -> list[str]:
    """The terms ``recall`` looks for in a memory: the query's words in lower
    case without stop words, and for text written without spaces (Chinese,
    Japanese, Korean) its character bigrams (a lone character stays one
    term). Duplicates removed, order kept; the first MAX_QUERY_TERMS terms
    of the first MAX_QUERY_CHARS characters."""
    terms = []
    for word in _WORD.findall(clean_text(query, MAX_QUERY_CHARS).lower()):
        if CJK_RE.search(word):
            for run in re.findall(r"(?:%s)+" % CJK_RE.pattern, word):
                terms.extend([run] if len(run) == 1 else [run[i:i + 2] for i in range(len(run) - 1)])
            terms.extend(part for part in CJK_RE.split(word) if len(part) > 1 and part not in STOP_WORDS)
        elif len(word) > 1 and word not in STOP_WORDS:
            terms.append(word)
    return list(dict.fromkeys(terms))[:MAX_QUERY_TERMS]


def keyword_score(terms: list[str], text: str) -> float:
    """The share of ``terms`` found in ``text`` (case-insensitive), 0..1."""
    if not terms:
        return 0.0
    text = text.lower()
    return sum(1 for term in terms if term in text) / len(terms)


def recency_score(write_date, now) -> float:
    """1 for a memory written now, halving every RECENCY_HALF_LIFE_DAYS."""
    age_days = max(0.0, (now - (write_date or now)).total_seconds() / 86400.0)
    return math.pow(0.5, age_days / RECENCY_HALF_LIFE_DAYS)


def current_importance(importance, memory_type, write_date, now) -> float:
    """The importance ``recall`` ranks by: a semantic memory's stored
    ``importance`` times 0.5 ** (days since it was last written /
    IMPORTANCE_HALF_LIFE_DAYS): ``store`` again, or an edit, renews it;
    being recalled does not, or what is recalled would never fade.
    Episodic and procedural memories keep theirs (an episode expires
    instead, a way of working stays). 0..1."""
    if memory_type != "semantic":
        return importance or 0.0
    age_days = max(0.0, (now - (write_date or now)).total_seconds() / 86400.0)
    return (importance or 0.0) * math.pow(0.5, age_days / IMPORTANCE_HALF_LIFE_DAYS)


class AgenticAiMemory(models.Model):
    """One remembered item (see the module docstring).

    Owner rules: a ``user`` or ``thread`` memory has a ``user_id`` (a
    ``thread`` memory also its conversation, of that user); a ``global``
    memory has neither. ``agent_id`` empty means every agent."""
    _name = "agentic.ai.memory"
    _description = "AI Memory"
    _rec_name = "key"
    _order = "importance desc, write_date desc, id desc"

    key = fields.Char(required=True, index=True, help="What the memory is about, e.g. 'quotation validity'. Storing "
                                                      "again under the same key (same owner, scope, conversation and "
                                                      "agent) replaces the content.")
    content = fields.Text(required=True)
    memory_type = fields.Selection([
        ("episodic", "Episodic"),
        ("semantic", "Semantic"),
        ("procedural", "Procedural"),
    ], string="Type", default="semantic", required=True,
        help="Episodic: a summary of a conversation (expires); semantic: a preference or business fact; procedural: "
             "a way of working.")
    scope = fields.Selection([
        ("thread", "This conversation"),
        ("user", "User"),
        ("global", "Everyone"),
    ], default="user", required=True, index=True)
    user_id = fields.Many2one("res.users", string="User", index=True, ondelete="cascade",
                              default=lambda self: self.env.user,
                              help="Whose memory this is; empty for a memory shared with everyone.")
    agent_id = fields.Many2one("agentic.ai.agent", string="Agent", index="btree_not_null", ondelete="cascade",
                               help="Only this agent recalls it; empty: every agent.")
    thread_id = fields.Many2one("agentic.ai.thread", string="Conversation", index="btree_not_null",
                                ondelete="cascade", help="For a memory of one conversation: deleted with it.")
    importance = fields.Float(default=0.5, help="From 0 to 1, as stored.")
    current_importance = fields.Float(
        string="Importance Now", compute="_compute_current_importance",
        help="What recall ranks by: a semantic memory's importance halves with every 180 days since it was last "
             "written (stored again or edited); other memories keep theirs. Lists sort by the stored importance.")
    access_count = fields.Integer(readonly=True, help="How many times it was recalled into a prompt.")
    last_accessed = fields.Datetime(readonly=True)
    expires_at = fields.Datetime(string="Expires", index="btree_not_null",
                                 help="Never recalled after this time; deleted by the daily Memory Cleanup.")
    source = fields.Char(help="Where it came from: the conversation it was learnt in, or the user.")
    company_id = fields.Many2one("res.company", default=lambda self: self.env.company, index=True)

    @api.depends("importance", "memory_type", "write_date")
    def _compute_current_importance(self):
        now = fields.Datetime.now()
        for memory in self:
            memory.current_importance = current_importance(memory.importance, memory.memory_type, memory.write_date,
                                                           now)

    @api.constrains("importance")
    def _check_importance(self):
        for memory in self:
            if not 0.0 <= memory.importance <= 1.0:
                raise ValidationError(self.env._("The importance of a memory is between 0 and 1."))

    @api.constrains("scope", "user_id", "thread_id")
    def _check_owner(self):
        for memory in self:
            if memory.scope == "global":
                if memory.user_id or memory.thread_id:
                    raise ValidationError(self.env._("A memory shared with everyone has no user and no conversation."))
                continue
            if not memory.user_id:
                raise ValidationError(self.env._("A memory of a user or a conversation needs its user."))
            if memory.scope == "thread":
                if not memory.thread_id or memory.thread_id.sudo().user_id != memory.user_id:
                    raise ValidationError(self.env._("A conversation's memory needs a conversation of its user."))
            elif memory.thread_id:
                raise ValidationError(self.env._("Only a conversation's memory is linked to a conversation."))

    @api.model_create_multi
    def create(self, vals_list):
        for vals in vals_list:
            self._clean_values(vals)
            if vals.get("memory_type") == "episodic" and "expires_at" not in vals:
                vals["expires_at"] = self._episodic_expiry()
        return super().create(vals_list)

    def write(self, vals):
        if not self.env.su:
            for field_name in ("user_id", "thread_id"):
                if field_name in vals and any(m[field_name].id != (vals[field_name] or False) for m in self):
                    raise AccessError(self.env._("The user and the conversation of a memory cannot be changed."))
            if "scope" in vals and any(m.scope != vals["scope"] for m in self) \
                    and not self.env.user.has_group("agentic_ai.group_agentic_ai_operator"):
                raise AccessError(self.env._("Only AI operators change who a memory is for."))
        return super().write(self._clean_values(dict(vals)))

    @api.model
    def _clean_values(self, vals):
        """Normalise the key and make the texts storable, in place; a
        memory shared with everyone has no user and no conversation."""
        if vals.get("scope") == "global":
            vals.update(user_id=False, thread_id=False)
        if "key" in vals:
            vals["key"] = normalize_key(vals["key"])
        if "content" in vals:
            vals["content"] = clean_text(vals["content"], MAX_CONTENT_CHARS).strip()
        return vals

    @api.model
    def _episodic_expiry(self):
        """When an episodic memory stored now expires
        (``agentic_ai.memory_episodic_days``, default 30; 0 or less: never)."""
        raw = self.env["ir.config_parameter"].sudo().get_param("agentic_ai.memory_episodic_days",
                                                                 str(DEFAULT_EPISODIC_DAYS))
        try:
            days = float(raw)
        except ValueError:
            days = DEFAULT_EPISODIC_DAYS
        return fields.Datetime.now() + timedelta(days=days) if days > 0 else False

    # ------------------------------------------------------------------ API
    @api.model
    def store(self, key, content, memory_type="semantic", scope="user", importance=0.5, user=None, thread=None,
              agent=None, expires_at=None, source=None):
        """Create or update (same normalised ``key``, ``scope``, owner,
        conversation and agent) one memory and return it.

        ``user`` (record or id) defaults to the current user for the
        ``user`` and ``thread`` scopes and is ignored for ``global``;
        ``thread`` is required for the ``thread`` scope (its user becomes the
        owner); ``agent`` limits it to one agent. ``expires_at`` None keeps
        the default (episodic: the configured TTL, others: never). Access
        rights and record rules of the environment apply (a plain user
        cannot store a global memory). Raises ValidationError for an empty
        key or content, an importance outside 0..1, a bad owner."""
        if scope not in dict(self._fields["scope"].selection):
            raise ValidationError(self.env._("Unknown memory scope: %s", scope))
        thread = self.env["agentic.ai.thread"].browse(int(thread)) if isinstance(thread, int) else thread
        agent = self.env["agentic.ai.agent"].browse(int(agent)) if isinstance(agent, int) else agent
        if scope == "global":
            user, thread = self.env["res.users"], self.env["agentic.ai.thread"]
        else:
            user = self.env["res.users"].browse(int(user)) if isinstance(user, int) else (user or self.env.user)
            if scope == "thread":
                if not thread:
                    raise ValidationError(self.env._("A conversation's memory needs its conversation."))
                user = thread.sudo().user_id
            else:
                thread = self.env["agentic.ai.thread"]
        key = normalize_key(key)
        content = clean_text(content, MAX_CONTENT_CHARS).strip()
        if not key or not content:
            raise ValidationError(self.env._("A memory needs a key and a content."))
        vals = {"key": key, "content": content, "memory_type": memory_type, "scope": scope,
                "user_id": user.id or False, "thread_id": (thread and thread.id) or False,
                "agent_id": (agent and agent.id) or False, "importance": float(importance)}
        if source is not None:
            vals["source"] = clean_text(source, 200)
        if expires_at is not None:
            vals["expires_at"] = expires_at
        elif memory_type == "episodic":
            vals["expires_at"] = self._episodic_expiry()
        else:
            vals["expires_at"] = False
        existing = self.search([("key", "=", key), ("scope", "=", scope), ("user_id", "=", vals["user_id"]),
                                ("thread_id", "=", vals["thread_id"]), ("agent_id", "=", vals["agent_id"])],
                               limit=1)
        if existing:
            existing.write(vals)
            return existing
        return self.create(vals)

    def _counts_as_words_of(self, user):
        """Whether this memory's text counts as ``user``'s own words for the
        guard (issue 23 point 3; engine/guard/provenance.py): written and last
        changed by that user, their own memory, or by AI administrators
        (any scope);
        never a memory learnt by consolidation or last written by the
        superuser, nor a shared memory written by an operator. Any other
        memory reaches the model as data, and a turn given one counts as a
        turn given read text."""
        self.ensure_one()
        memory = self.sudo()
        authors = memory.create_uid | memory.write_uid  # who wrote it and who last changed it
        if not memory.create_uid or SUPERUSER_ID in authors.ids or (memory.source or "").startswith(
                CONSOLIDATION_SOURCE):
            return False
        if memory.scope != "global" and authors == memory.user_id == user:
            return True
        return all(author.has_group("agentic_ai.group_agentic_ai_admin") for author in authors)

    @api.model
    def recall(self, query, user, agent=None, thread=None, limit=5):
        """The memories ``user`` (record or id) may be reminded of, best
        first, at most ``limit``: their own ``user`` memories, ``thread``'s
        own ``thread`` memories, the ``global`` ones; for ``agent`` or every
        agent; of no company or one of the user's that this environment works
        in; never an expired one. Searched in this environment, so record
        rules apply as well (another user's memories are never returned).

        Score (spec §8.3): 0.5 × the share of the query's terms found in key
        and content + 0.3 × importance now (``current_importance``: a
        semantic memory's halves every 180 days, spec §8.1) + 0.2 × recency
        (write date, halving every 30 days); ties by importance now, then
        write date, newest first. A
        memory that matches no term still ranks by importance and recency
        (a preference applies whatever is asked). Each memory returned has
        its ``access_count`` and ``last_accessed`` updated without changing
        its write date."""
        user = self.env["res.users"].browse(int(user)) if isinstance(user, int) else user
        agent = self.env["agentic.ai.agent"].browse(int(agent)) if isinstance(agent, int) else agent
        thread = self.env["agentic.ai.thread"].browse(int(thread)) if isinstance(thread, int) else thread
        if not user or limit <= 0:
            return self.browse()
        now = fields.Datetime.now()
        # The user's active companies (Odoo's cached ids, not a read of res.company), among those the request works in.
        companies = set(user.sudo()._get_company_ids()) & set(self.env.companies.ids)
        owned = ["&", ("scope", "=", "user"), ("user_id", "=", user.id)]
        if thread:
            owned = ["|", *owned, "&", "&", ("scope", "=", "thread"), ("thread_id", "=", thread.id),
                     ("user_id", "=", user.id)]
        domain = ["&", "&", "&",
                  "|", ("expires_at", "=", False), ("expires_at", ">", now),
                  "|", ("agent_id", "=", False), ("agent_id", "=", agent.id if agent else False),
                  "|", ("company_id", "=", False), ("company_id", "in", sorted(companies)),
                  "|", ("scope", "=", "global"), *owned]
        memories = self.search(domain)
        terms = query_terms(query)
        weights_kw, weights_imp, weights_rec = WEIGHTS

        def rank(memory):
            importance = current_importance(memory.importance, memory.memory_type, memory.write_date, now)
            score = (weights_kw * keyword_score(terms, f"{memory.key}\n{memory.content}")
                     + weights_imp * importance + weights_rec * recency_score(memory.write_date, now))
            return score, importance, memory.write_date or now, memory.id

        best = self.browse([m.id for m in sorted(memories, key=rank, reverse=True)[:limit]])
        best._mark_accessed()
        return best

    def _mark_accessed(self):
        """Count one access of these memories, now, with SQL: their write
        date (the recency of ``recall``) and writer stay as they were, and a
        user who may only read a global memory still counts its use. Best
        effort, never blocking nor failing the turn: a memory a concurrent
        transaction is counting (locked, or changed since this transaction
        began) is not counted this time."""
        if not self:
            return
        try:
            with self.env.cr.savepoint(flush=False):
                self.env.cr.execute(SQL(
                    "UPDATE agentic_ai_memory SET access_count = COALESCE(access_count, 0) + 1, last_accessed = %s "
                    "WHERE id IN (SELECT id FROM agentic_ai_memory WHERE id IN %s FOR UPDATE SKIP LOCKED)",
                    fields.Datetime.now(), tuple(self.ids)))
        except psycopg2.Error as error:
            _logger.info("Memories %s: their access was not counted (%s)", self.ids, error.pgcode)
        self.invalidate_recordset(["access_count", "last_accessed"])

    @api.model
    def forget_expired(self):
        """Delete every expired memory (whatever its owner) and return how
        many were deleted (spec §3.6, the Memory Cleanup cron)."""
        expired = self.sudo().search([("expires_at", "!=", False), ("expires_at", "<=", fields.Datetime.now())])
        count = len(expired)
        expired.unlink()
        return count

    @api.model
    def _cron_forget_expired(self):
        """Cron "Agentic AI: Memory Cleanup" (daily, spec §12)."""
        return self.forget_expired()
