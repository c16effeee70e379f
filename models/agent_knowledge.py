"""Knowledge sources and their chunks: the RAG index (spec 000 §3.8, §9).

Indexing never runs inside a web request: ``action_index`` queues the
source and wakes the "Agentic AI: Knowledge Indexing" cron, which runs
``_extract_text`` → ``_chunk_text`` → ``_embed_chunks`` for each queued
source and commits after every batch of embeddings, so the form's progress
bar moves while it works.

One consistent index (BR-11): a re-index writes its chunks as a new
*generation* next to the old one; only when the new generation is complete
does the source switch to it (its ``embedding_model`` and
``embedding_dimension`` with it) and the old chunks are deleted. Search
reads the active generation only, and compares a query with the vectors of
the model that made them; when the provider's embedding model is no longer
the one the index was built with (the administrator switched models), the
query cannot be embedded comparably and search answers by keywords, saying
that the index is being rebuilt.

Record sources (``odoo_model``) are read as the user who asked for the
indexing (``index_user_id``), with that user's access rights and record
rules: the index never holds what its indexer could not read. The daily
"Knowledge Re-index" cron re-queues them with the same user.
"""
import ast
import base64
import functools
import logging
import math
from functools import partial

from odoo import api, fields, models
from odoo.exceptions import AccessError, UserError, ValidationError
from odoo.fields import Domain
from odoo.tools import SQL

from ..engine.knowledge.chunker import chunk_text
from ..engine.knowledge.extract import ExtractionError, extract_file, extract_html
from ..engine.knowledge.url_fetch import UrlFetchError, UrlRefused, fetch_url
from ..engine.knowledge.vector_store import VectorStore
from ..llm import EmbeddingsUnavailable, LLMError
from ..llm.tokenizer import count_tokens

_logger = logging.getLogger(__name__)

EMBED_BATCH = 20                # texts per embedding call (spec 000 §9.1)
EMBED_MAX_TOKENS = 8000         # no chunk above the embedding models' input limit (OpenAI: 8,191)
MAX_RECORDS = 10_000            # records of an odoo_model source rendered per indexing
URL_MAX_BYTES = 5 * 1024 * 1024
MAX_QUERY_CHARS = 8000          # characters of a question searched (embedded and split into keywords)
URL_TIMEOUT = 20.0              # seconds
STALE_INDEXING_MINUTES = 30     # an "indexing" source untouched this long lost its worker: queued again
NO_TEXT_WARNING = "no extractable text"
QUEUED_STATES = ("queued", "indexing")


def _vector_usable(vector) -> bool:
    """A vector the store accepts: finite numbers, not all zero."""
    try:
        norm = math.fsum(float(x) * float(x) for x in vector)
    except (TypeError, ValueError):
        return False
    return math.isfinite(norm) and norm > 0.0


def _format_value(record, field):
    """The text of ``record[field.name]`` for a "Name: value" line, or ""
    when it is empty."""
    value = record[field.name]
    if field.type in ("many2one", "many2many", "one2many"):
        return ", ".join(name for name in value.mapped("display_name") if name)
    if field.type == "boolean":
        return record.env._("Yes") if value else record.env._("No")
    if field.type == "selection":
        return dict(field._description_selection(record.env)).get(value, "") if value else ""
    if field.type == "binary" or value is False or value is None:
        return ""
    return str(value)


class AgenticAiKnowledgeSource(models.Model):
    """A document, web page, set of Odoo records or text the agents answer
    from (spec 000 §3.8)."""
    _name = "agentic.ai.knowledge.source"
    _inherit = ["agentic.ai.run.settings.source"]
    _run_settings_fields = frozenset({"agent_ids"})  # a run reads its agent's sources, nothing of them
    _description = "AI Knowledge Source"
    _order = "name, id"

    _chunk_size_positive = models.Constraint("CHECK(chunk_size > 0)", "The chunk size must be positive.")
    _chunk_overlap_valid = models.Constraint("CHECK(chunk_overlap >= 0 AND chunk_overlap < chunk_size)",
                                             "The overlap must be at least 0 and smaller than the chunk size.")

    name = fields.Char(required=True)
    active = fields.Boolean(default=True)
    company_id = fields.Many2one("res.company", default=lambda self: self.env.company, index=True)
    source_type = fields.Selection([
        ("file", "File"),
        ("url", "Web Page"),
        ("odoo_model", "Odoo Records"),
        ("text", "Text"),
    ], required=True, default="text")
    file = fields.Binary(attachment=True, help="PDF, DOCX, TXT, CSV or HTML.")
    file_name = fields.Char()
    url = fields.Char(string="URL", help="http(s) page; only AI operators may set it. Private and local addresses "
                                         "are refused, on every redirect too.")
    model_id = fields.Many2one("ir.model", string="Model", ondelete="cascade")
    model_name = fields.Char(related="model_id.model", string="Model Name")
    domain = fields.Char(default="[]", help="Odoo domain selecting the records, e.g. [('is_company', '=', True)].")
    field_ids = fields.Many2many(
        "ir.model.fields", "agentic_ai_knowledge_source_field_rel", "source_id", "field_id", string="Fields",
        domain="[('model_id', '=', model_id)]",
        help="Fields rendered as \"Name: value\" lines after each record's name.")
    raw_text = fields.Text(string="Text")
    chunk_size = fields.Integer(default=500, help="Chunk size, in tokens of the embedding model.")
    chunk_overlap = fields.Integer(default=50, help="Tokens repeated at the start of the next chunk.")
    embedding_provider_id = fields.Many2one(
        "agentic.ai.llm.provider", string="Embedding Provider", ondelete="set null",
        help="Provider that embeds the chunks and the questions; empty = the LLM provider of the first linked agent.")
    agent_ids = fields.Many2many("agentic.ai.agent", "agentic_ai_agent_knowledge_source_rel", "source_id", "agent_id",
                                 string="Agents")
    state = fields.Selection([
        ("draft", "Draft"),
        ("queued", "Queued"),
        ("indexing", "Indexing"),
        ("indexed", "Indexed"),
        ("failed", "Failed"),
    ], default="draft", required=True, readonly=True, copy=False)
    error = fields.Text(readonly=True, copy=False, help="Why the last indexing failed.")
    warning = fields.Text(readonly=True, copy=False,
                          help="What the last indexing could not do, e.g. no extractable text or a partial extraction.")
    progress = fields.Float(readonly=True, copy=False, help="Progress of the running indexing, 0-100.")
    chunk_ids = fields.One2many("agentic.ai.knowledge.chunk", "source_id", string="Chunks")
    chunk_count = fields.Integer(readonly=True, copy=False, help="Chunks of the current index.")
    generation = fields.Integer(readonly=True, copy=False, help="The chunks' generation search reads.")
    embedding_model = fields.Char(readonly=True, copy=False, help="Model that embedded the current index.")
    embedding_dimension = fields.Integer(readonly=True, copy=False)
    last_indexed = fields.Datetime(readonly=True, copy=False)
    needs_reindex = fields.Boolean(
        readonly=True, copy=False,
        help="The provider's embedding model changed since this index was built: index it again. Until then, "
             "questions are answered by keyword search.")
    index_user_id = fields.Many2one(
        "res.users", string="Indexed As", readonly=True, copy=False, ondelete="set null",
        help="Records are read with this user's rights: the user who last asked for the indexing.")

    @api.constrains("source_type", "url", "model_id", "domain")
    def _check_source(self):
        for source in self:
            if source.url and not source.url.lower().startswith(("http://", "https://")):
                raise ValidationError(self.env._("The URL must start with http:// or https://."))
            if source.source_type == "odoo_model":
                source._parsed_domain()

    # ------------------------------------------------------------------ CRUD
    @api.model_create_multi
    def create(self, vals_list):
        if any(vals.get("url") for vals in vals_list):
            self._check_url_editor()
        return super().create(vals_list)

    def write(self, vals):
        if vals.get("url"):
            self._check_url_editor()
        result = super().write(vals)
        if {"embedding_provider_id", "agent_ids"} & set(vals):  # another provider may embed with another model
            self.sudo().filtered(lambda s: s.embedding_model and not s.needs_reindex
                                 and s.embedding_model != s._embedding_model_name()).write({"needs_reindex": True})
        return result

    def unlink(self):
        chunks = self.sudo().with_context(active_test=False).chunk_ids
        chunks._delete_vectors()
        return super().unlink()

    # ---------------------------------------------------------------- actions
    def action_index(self):
        """Queue these sources for indexing and wake the indexing cron; the
        work runs in the background, never in this request. AI operators
        only (AccessError)."""
        self.check_access("write")
        busy = self.filtered(lambda s: s.state in QUEUED_STATES)
        (self - busy).write({"state": "queued", "progress": 0.0, "error": False, "index_user_id": self.env.uid})
        self._trigger_indexing()
        return True

    def action_view_chunks(self):
        """The chunks of the current index."""
        self.ensure_one()
        return {
            "type": "ir.actions.act_window",
            "name": self.env._("Chunks of %s", self.name),
            "res_model": "agentic.ai.knowledge.chunk",
            "view_mode": "list,form",
            "domain": [("source_id", "=", self.id), ("generation", "=", self.generation)],
        }

    # ------------------------------------------------------------- pipeline
    def _extract_text(self):
        """The source's text (spec 000 §9.1 step 1): a file decoded and
        parsed by engine/knowledge/extract.py, a web page fetched by
        engine/knowledge/url_fetch.py (scheme and addresses checked on every hop),
        records rendered as "Name: value" lines, or the raw text. Warnings
        of the extraction (partial extraction...) go to ``warning``.
        Raises UserError when the source cannot be read."""
        self.ensure_one()
        warnings = ()
        if self.source_type == "text":
            text = self.raw_text or ""
        elif self.source_type == "odoo_model":
            text = self._render_records()
        else:
            try:
                if self.source_type == "file":
                    if not self.file:
                        raise UserError(self.env._("No file is attached."))
                    data = self.with_context(bin_size=False).file
                    extracted = extract_file(base64.b64decode(data), self.file_name or "", "")
                else:
                    extracted = self._fetch_page()
            except ExtractionError as exc:
                raise UserError(self.env._("The document could not be read: %s", exc)) from None
            text, warnings = extracted.text, tuple(extracted.warnings)
            if extracted.partial and not warnings:
                warnings = (self.env._("The document was only partly extracted."),)
        # sudo: a record source is read as its indexer, who may not write sources
        self.sudo().warning = "\n".join(str(w) for w in warnings) or False
        return text or ""

    def _chunk_text(self, text):
        """``text`` split into overlapping chunks (engine/knowledge/chunker.py) of at
        most ``chunk_size`` tokens, counted with the embedding model's
        tokenizer (llm/tokenizer.py). Returns a list of ``Chunk``."""
        self.ensure_one()
        counter = partial(count_tokens, model=self._embedding_model_name() or "")
        size = min(self.chunk_size, EMBED_MAX_TOKENS)
        return chunk_text(text, size, min(self.chunk_overlap, size - 1), counter, max_tokens=EMBED_MAX_TOKENS)

    def _embed_chunks(self, chunks):
        """Write ``chunks`` (engine/knowledge/chunker.py ``Chunk``) as the next
        generation of this source's chunks, embedded in batches of
        ``EMBED_BATCH`` (spec 000 §9.1) by the embedding provider's
        adapter, each vector stored with its model and dimension. Without a
        provider able to embed, the chunks are kept for keyword search.
        In the indexing cron (context ``knowledge_commit``) progress is
        committed after every batch. Returns ``(chunk records, model,
        dimension)``; raises LLMError when the provider fails."""
        self.ensure_one()
        Chunk = self.env["agentic.ai.knowledge.chunk"].sudo()
        generation = self.generation + 1
        adapter = self._embedding_adapter()
        model_name = self._embedding_model_name() if adapter else ""
        store = VectorStore(self.env.cr)
        created, dimension, skipped = Chunk, 0, 0
        if not adapter:
            self.warning = self._join_warning(self.env._(
                "No provider that serves embeddings: questions are answered by keyword search."))
        for start in range(0, len(chunks), EMBED_BATCH):
            batch = chunks[start:start + EMBED_BATCH]
            vectors = [None] * len(batch)
            if adapter:
                try:
                    vectors = adapter.embed([c.text for c in batch])
                except EmbeddingsUnavailable:
                    adapter, model_name = None, ""
                    self.warning = self._join_warning(self.env._(
                        "The provider serves no embeddings: questions are answered by keyword search."))
            records = Chunk.create([{
                "source_id": self.id, "generation": generation, "sequence": start + i,
                "content": c.text, "token_count": c.tokens, "start_offset": c.start, "end_offset": c.end,
                "embedding_model": model_name if vector else False,
                "embedding_dimension": len(vector) if vector else 0,
            } for i, (c, vector) in enumerate(zip(batch, vectors, strict=True))])
            rows = []
            for record, vector in zip(records, vectors, strict=True):
                if vector is None:
                    continue
                if not _vector_usable(vector):
                    skipped += 1
                    record.write({"embedding_model": False, "embedding_dimension": 0})
                    continue
                if dimension and len(vector) != dimension:  # the provider's model changed during the indexing
                    raise LLMError(self.env._(
                        "The provider returned vectors of %(first)s and then %(then)s dimensions: its embedding "
                        "model changed during the indexing. Index the source again.",
                        first=dimension, then=len(vector)))
                dimension = len(vector)
                rows.append((record.id, model_name, [float(x) for x in vector]))
            if rows:
                store.add(rows)
            created |= records
            self._report_progress(10.0 + 90.0 * min(start + EMBED_BATCH, len(chunks)) / len(chunks))
        if skipped:
            self.warning = self._join_warning(self.env._(
                "%s chunks got an unusable (zero or not finite) vector and are found by keyword search only.",
                skipped))
        return created, (model_name if dimension else ""), dimension

    def _index_now(self):
        """Run the whole pipeline on this source and switch search to the new
        index once it is complete. Raises on failure (the caller records it)."""
        self.ensure_one()
        self.write({"state": "indexing", "progress": 0.0, "error": False, "warning": False})
        if self.source_type == "odoo_model" and self.index_user_id:
            text = self.with_user(self.index_user_id)._extract_text()
        else:
            text = self._extract_text()
        self._report_progress(5.0)
        chunks = self._chunk_text(text) if text.strip() else []
        self._report_progress(10.0)
        values = {"state": "indexed", "progress": 100.0, "last_indexed": fields.Datetime.now(),
                  "needs_reindex": False, "error": False}
        if not chunks:  # BR-14: a visible warning, no chunks, no embedding call
            self._drop_generations(keep=None)
            self.write(dict(values, warning=self._join_warning(self.env._(NO_TEXT_WARNING)), chunk_count=0,
                            generation=self.generation + 1, embedding_model=False, embedding_dimension=0))
            return
        created, model_name, dimension = self._embed_chunks(chunks)
        generation = self.generation + 1
        self.write(dict(values, chunk_count=len(created), generation=generation,
                        embedding_model=model_name or False, embedding_dimension=dimension))
        self._drop_generations(keep=generation)

    # ---------------------------------------------------------------- search
    def search_similar(self, query, limit=5):
        """The ``limit`` chunks of these sources closest to ``query``: by
        vector similarity (engine/knowledge/vector_store.py, cosine, higher is closer)
        among the chunks embedded by the model the provider embeds the query
        with; by keywords for sources without such embeddings (none yet, a
        provider that cannot embed, or a model switched since indexing,
        BR-11). Only the sources the caller may read are searched.

        Returns a list of ``{"chunk_id", "content", "source_id", "source",
        "score", "method"}`` dicts (``method``: "vector" or "keyword"),
        vector results first, best first. Never raises for the provider."""
        query = (query or "").strip()[:MAX_QUERY_CHARS]
        sources = self._filtered_access("read").filtered(lambda s: s._records_readable())
        sources = sources.sudo().filtered("chunk_count")
        if not query or not sources or limit <= 0:
            return []
        store = VectorStore(self.env.cr)
        hits, keyword_sources = [], sources.browse()
        for group in sources.grouped(lambda s: s._embedding_provider()).values():
            comparable = group.filtered(lambda s: s.embedding_model and s.embedding_dimension
                                        and s.embedding_model == s._embedding_model_name())
            keyword_sources |= group - comparable
            if not comparable:
                continue
            adapter = comparable[0]._embedding_adapter()
            if not adapter:
                keyword_sources |= comparable
                continue
            try:
                vector = adapter.embed([query])[0]
            except LLMError as exc:
                _logger.warning("Knowledge search: the query could not be embedded (%s); keyword search", exc)
                keyword_sources |= comparable
                continue
            if len(vector) != comparable[0].embedding_dimension or not _vector_usable(vector):
                keyword_sources |= comparable
                continue
            for model_name, same_model in comparable.grouped("embedding_model").items():
                found = store.search(vector, model_name, same_model.ids, limit * 3)
                hits += [(chunk_id, score, "vector") for chunk_id, score in found]
        if keyword_sources:
            terms = [t for t in query.split() if len(t) > 1][:32] or [query]
            hits += [(chunk_id, score, "keyword")
                     for chunk_id, score in store.keyword_search(terms, keyword_sources.ids, limit * 3)]
        return sources._format_hits(hits, limit)

    def index_notice(self):
        """A sentence for the answer when some of these sources are searched
        by keywords only because their index is being rebuilt for a new
        embedding model (BR-11), else ""."""
        stale = self.sudo().filtered(lambda s: s.needs_reindex or (
            s.embedding_model and s.embedding_model != s._embedding_model_name()))
        if not stale:
            return ""
        return self.env._("The knowledge index of %s is being rebuilt for a new embedding model; until then it is "
                          "searched by keywords.", ", ".join(stale.mapped("name")))

    # ----------------------------------------------------------------- crons
    @api.model
    def _cron_index_sources(self, limit=None):
        """Cron "Knowledge Indexing": index the queued sources one by one,
        oldest first, each claimed and committed on its own, progress
        committed per batch; a failure marks that source ``failed`` with
        the reason and never fails the cron. Returns the sources handled."""
        sources = self.sudo().with_context(knowledge_commit=True)
        cron = self.env["ir.cron"]
        handled, tried = 0, set()
        while limit is None or handled < limit:
            source = sources._claim_queued(tried)
            if not source:
                break
            tried.add(source.id)
            source._run_index()
            handled += 1
            if not cron._commit_progress(1, remaining=sources._queued_count()):
                break
        return handled

    @api.model
    def _cron_reindex_model_sources(self):
        """Cron "Knowledge Re-index" (spec 000 §12, disabled by default):
        queue every active record source again, read as its last indexer."""
        sources = self.sudo().search([("source_type", "=", "odoo_model"), ("state", "not in", QUEUED_STATES)])
        for source in sources:
            source.write({"state": "queued", "progress": 0.0,
                          "index_user_id": (source.index_user_id or source.create_uid).id})
        if sources:
            sources._trigger_indexing()
        return len(sources)

    @api.model
    def _mark_needs_reindex(self, providers):
        """BR-11: the embedding model of ``providers`` changed; their indexed
        sources must be indexed again."""
        sources = self.sudo().with_context(active_test=False).search([("embedding_model", "!=", False)])
        stale = sources.filtered(lambda s: s._embedding_provider() in providers
                                 and s.embedding_model != s._embedding_model_name())
        stale.write({"needs_reindex": True})
        return stale

    # --------------------------------------------------------------- helpers
    def _records_readable(self):
        """Whether the current user may read what this source indexed: any
        source but a record source; a record source (indexed with its
        indexer's rights, maybe an HR or accounting officer's) only when the
        user may read its model, every chosen field, and every record its
        indexer reads with its domain (at most ``MAX_RECORDS``). Otherwise
        its chunks would show a plain AI user records and fields Odoo hides
        from them."""
        self.ensure_one()
        if self.env.su or self.source_type != "odoo_model":
            return True
        source = self.sudo()
        model_name = source.model_id.model
        if not model_name or model_name not in self.env:
            return False
        model = self.env[model_name]
        if not model.has_access("read") or any(
                f.name not in model._fields or not model._has_field_access(model._fields[f.name], "read")
                for f in source.field_ids):
            return False
        indexer = source.index_user_id or source.create_uid
        if indexer == self.env.user:
            return True
        context = {k: v for k, v in self.env.context.items() if k != "allowed_company_ids"}
        try:  # the indexer's records, as the cron reads them (all of the indexer's companies)
            with self.env.cr.savepoint(flush=False):  # a domain PostgreSQL refuses must not abort the search
                theirs = model.with_env(self.env(user=indexer.id, context=context)).search(
                    source._parsed_domain(), limit=MAX_RECORDS)
                return len(model.browse(theirs.ids)._filtered_access("read")) == len(theirs)
        except Exception as error:  # noqa: BLE001 - a source that cannot be checked is hidden; the others still count
            _logger.info("Knowledge source %s is hidden from user %s: its records cannot be checked (%s)",
                         source.id, self.env.uid, error)
            return False

    def _check_url_editor(self):
        if not (self.env.su or self.env.user.has_group("agentic_ai.group_agentic_ai_operator")):
            raise AccessError(self.env._("Only AI operators can add web pages to the knowledge."))

    def _parsed_domain(self):
        """``domain`` as a list (a literal; nothing is evaluated). Raises
        ValidationError."""
        try:
            domain = ast.literal_eval((self.domain or "[]").strip())
        except (ValueError, SyntaxError):
            raise ValidationError(self.env._("The domain of %s is not a valid Odoo domain.", self.name)) from None
        if not isinstance(domain, (list, tuple)):
            raise ValidationError(self.env._("The domain of %s must be a list.", self.name))
        return list(domain)

    def _render_records(self):
        """The records of an odoo_model source, as the current user (with
        their rights), at most ``MAX_RECORDS``: each its display name, then
        one "Field: value" line per non-empty chosen field, records apart by
        a blank line."""
        self.ensure_one()
        model_name = self.sudo().model_id.model
        if not model_name or model_name not in self.env:
            raise UserError(self.env._("Choose the model whose records are indexed."))
        model = self.env[model_name]
        fields_ = [model._fields[f.name] for f in self.sudo().field_ids
                   if f.name in model._fields and model._has_field_access(model._fields[f.name], "read")]
        blocks = []
        for record in model.search(self._parsed_domain(), limit=MAX_RECORDS):
            lines = [record.display_name or ""]
            for field in fields_:
                value = _format_value(record, field)
                if value:
                    lines.append(f"{field._description_string(self.env)}: {value}")
            blocks.append("\n".join(line for line in lines if line))
        return "\n\n".join(block for block in blocks if block)

    def _fetch_page(self):
        """The web page's main text (engine/knowledge/url_fetch.py, engine/knowledge/extract.py)."""
        if not self.url:
            raise UserError(self.env._("No URL is set."))
        try:
            fetched = fetch_url(self.url, max_bytes=URL_MAX_BYTES, timeout=URL_TIMEOUT)
        except UrlRefused as exc:
            raise UserError(self.env._("The address was refused: %s", exc)) from None
        except UrlFetchError as exc:
            raise UserError(self.env._("The page could not be fetched: %s", exc)) from None
        content_type = (fetched.content_type or "").lower()
        if "html" in content_type or not content_type:
            return extract_html(fetched.data.decode("utf-8", errors="replace"), base_url=fetched.final_url)
        name = fetched.final_url.rsplit("/", 1)[-1] or "page"
        return extract_file(fetched.data, name, content_type)

    def _embedding_provider(self):
        """The provider embedding this source: its own, else the first linked
        agent's LLM provider; may be empty."""
        self.ensure_one()
        source = self.sudo()
        return source.embedding_provider_id or source.agent_ids.filtered("llm_provider_id")[:1].llm_provider_id

    def _embedding_model_name(self):
        """The embedding model the provider uses now ("" without provider)."""
        provider = self._embedding_provider()
        return provider._embedding_model_name() if provider else ""

    def _embedding_adapter(self):
        """The provider's adapter, or None when there is no provider or it
        has no embeddings API (Anthropic)."""
        provider = self._embedding_provider()
        if not provider or provider.provider_type == "anthropic":
            return None
        return provider.sudo()._get_adapter()

    def _join_warning(self, text):
        return "\n".join(w for w in (self.warning, text) if w)

    def _report_progress(self, value):
        self.progress = round(min(max(value, 0.0), 100.0), 1)
        if self.env.context.get("knowledge_commit"):
            self.env.cr.commit()

    def _drop_generations(self, keep):
        """Delete this source's chunks (and vectors) of every generation but ``keep``."""
        domain = [("source_id", "in", self.ids)]
        if keep is not None:
            domain.append(("generation", "!=", keep))
        self.env["agentic.ai.knowledge.chunk"].sudo().search(domain).unlink()

    def _format_hits(self, hits, limit):
        """``hits`` (chunk id, score, method) as result dicts, chunks of the
        active generations only, each chunk once, at most ``limit``."""
        chunks = self.env["agentic.ai.knowledge.chunk"].sudo().browse({h[0] for h in hits}).exists()
        by_id = {c.id: c for c in chunks if c.source_id in self and c.generation == c.source_id.generation}
        results, seen = [], set()
        ordered = sorted((h for h in hits if h[2] == "vector"), key=lambda h: -h[1]) + \
            sorted((h for h in hits if h[2] == "keyword"), key=lambda h: -h[1])
        for chunk_id, score, method in ordered:
            chunk = by_id.get(chunk_id)
            if not chunk or chunk_id in seen or not math.isfinite(score):
                continue
            seen.add(chunk_id)
            results.append({"chunk_id": chunk.id, "content": chunk.content, "source_id": chunk.source_id.id,
                            "source": chunk.source_id.name, "score": float(score), "method": method})
            if len(results) >= limit:
                break
        return results

    def _trigger_indexing(self):
        cron = self.env.ref("agentic_ai.ir_cron_knowledge_index", raise_if_not_found=False)
        if cron:
            cron.sudo()._trigger()

    def _stale_indexing_sql(self):
        return SQL("(state = 'queued' OR (state = 'indexing' AND "
                   "write_date < now() at time zone 'UTC' - %s::interval))", f"{STALE_INDEXING_MINUTES} minutes")

    def _queued_count(self):
        self.env.cr.execute(SQL("SELECT count(*) FROM agentic_ai_knowledge_source WHERE active AND %s",
                                self._stale_indexing_sql()))
        return self.env.cr.fetchone()[0]

    def _claim_queued(self, exclude):
        """The oldest queued source not in ``exclude``, marked ``indexing``
        and committed; an empty recordset when none is left."""
        self.env.cr.execute(SQL(
            "SELECT id FROM agentic_ai_knowledge_source WHERE active AND %s AND id NOT IN %s "
            "ORDER BY write_date, id LIMIT 1 FOR UPDATE SKIP LOCKED",
            self._stale_indexing_sql(), tuple(exclude) or (0,)))
        row = self.env.cr.fetchone()
        if not row:
            return self.browse()
        source = self.browse(row[0])
        source.write({"state": "indexing", "progress": 0.0})
        self.env["ir.cron"]._commit_progress()
        return source

    def _run_index(self):
        """Index this claimed source; on failure roll back to the last
        commit, drop the unfinished generation and record the reason.
        Never raises."""
        self.ensure_one()
        try:
            self._index_now()
        except Exception as exc:  # every failure is recorded on the source
            self.env.cr.rollback()
            self.env.invalidate_all()
            expected = isinstance(exc, (UserError, ValidationError, AccessError, LLMError, ValueError))
            reason = str(exc) if expected else f"{type(exc).__name__} (details in the server log)"
            if expected:
                _logger.warning("Knowledge source %s could not be indexed: %s", self.id, reason)
            else:
                _logger.error("Knowledge source %s could not be indexed", self.id, exc_info=exc)
            self._drop_generations(keep=self.generation)
            self.write({"state": "failed", "error": reason, "progress": 0.0})
        self.env.cr.commit()


class AgenticAiKnowledgeChunk(models.Model):
    """A piece of a knowledge source's text, with its embedding kept by
    engine/knowledge/vector_store.py (spec 000 §3.8). Written by the indexing only."""
    _name = "agentic.ai.knowledge.chunk"
    _description = "AI Knowledge Chunk"
    _order = "source_id, generation, sequence, id"

    source_id = fields.Many2one("agentic.ai.knowledge.source", required=True, ondelete="cascade", index=True)
    company_id = fields.Many2one(related="source_id.company_id", store=True)
    generation = fields.Integer(readonly=True, index=True)
    sequence = fields.Integer(readonly=True)
    content = fields.Text(required=True, readonly=True)
    token_count = fields.Integer(readonly=True)
    start_offset = fields.Integer(readonly=True, help="Offset of the chunk's first character in the source's text.")
    end_offset = fields.Integer(readonly=True)
    embedding_model = fields.Char(readonly=True, help="Empty when the chunk has no vector (keyword search only).")
    embedding_dimension = fields.Integer(readonly=True)

    @api.model
    def _hidden_source_ids(self):
        """Record sources whose chunks the current user may not read
        (``_records_readable``): their chunks are neither found nor read."""
        if self.env.su:
            return []
        sources = self.env["agentic.ai.knowledge.source"].sudo().with_context(active_test=False).search(
            [("source_type", "=", "odoo_model")])
        return [source.id for source in sources if not source.with_env(self.env)._records_readable()]

    @api.model
    def _search(self, domain, *args, **kwargs):
        if not kwargs.get("bypass_access") and (hidden := self._hidden_source_ids()):
            domain = Domain(domain) & Domain("source_id", "not in", hidden)
        return super()._search(domain, *args, **kwargs)

    def _check_access(self, operation):
        result = super()._check_access(operation)
        if result or self.env.su or not self._ids:
            return result
        hidden = set(self._hidden_source_ids())
        forbidden = self.sudo().filtered(lambda c: c.source_id.id in hidden).with_env(self.env)
        if forbidden:
            return forbidden, functools.partial(self.env["ir.rule"]._make_access_error, operation, forbidden)
        return None

    def init(self):
        """The vector tables and indexes of engine/knowledge/vector_store.py (on an
        upgrade, pgvector tables of an older layout are rebuilt here)."""
        VectorStore.ensure_schema(self.env.cr)
        VectorStore(self.env.cr).ensure_vec_tables()

    def unlink(self):
        self._delete_vectors()
        return super().unlink()

    def _delete_vectors(self):
        if self.ids:
            VectorStore(self.env.cr).delete(self.ids)
