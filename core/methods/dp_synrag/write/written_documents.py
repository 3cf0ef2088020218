"""The public writer's finished documents, checkpointed one by one (docs/method.md §1.7, §2.6).

A realised document is post-processing of released topics and public text: writing it charges nothing,
and neither does writing it again. It is checkpointed as soon as it is final, so a resumed run reuses
the documents already written and writes only the rest. Each checkpoint names the topic's released words
and a digest of the public writing settings (task, example, token budget), and the label it was written for
(labels by topic): a resume reuses a document only for the same topic and label written the same way.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import Any

from core.methods.base import MethodContext
from core.methods.dp_synrag.shape.released_topics import Topic
from core.methods.dp_synrag.write.public_decoding import writer_generator
from core.methods.dp_synrag.write.realisation import Realisation, WriterSettings, realise
from core.methods.dp_synrag.write.roles import RoleSources
from core.privacy.release import CheckpointStore
from core.specs.runspec import DPSynRAGSpec

CHECKPOINT_PREFIX = "realised-"  # one checkpoint per topic index: realised-0, realised-1, …


def writing_key(task: str, example: str, max_new_tokens: int, target_words: int = 0) -> str:
    """A digest of the public settings a document was written under (the length it aimed at, when it had one)."""
    settings = [task, example, int(max_new_tokens)] + ([int(target_words)] if target_words else [])
    text = json.dumps(settings, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def checkpoint_name(index: int) -> str:
    return f"{CHECKPOINT_PREFIX}{index}"


def save_written(store: CheckpointStore, index: int, topic: Topic, key: str, doc: Realisation) -> None:
    """Checkpoint topic ``index``'s finished document, with the topic's words and the settings' digest."""
    entry = {**asdict(doc), "refused": list(doc.refused), "topic": list(topic.words), "key": key}
    if topic.label:
        entry["label"] = topic.label
    store.save(checkpoint_name(index), entry)


def load_written(store: CheckpointStore, topics: Sequence[Topic], key: str) -> dict[int, Realisation]:
    """The finished documents of these topics written under ``key``; a checkpoint of another topic (its
    words differ), of other settings or unreadable is not reused (the document is written again)."""
    out: dict[int, Realisation] = {}
    for index, topic in enumerate(topics):
        name = checkpoint_name(index)
        if not store.has(name):
            continue
        doc = _document(store.load(name), topic, key)
        if doc is not None:
            out[index] = doc
    return out


def _document(entry: Any, topic: Topic, key: str) -> Realisation | None:
    if (not isinstance(entry, Mapping) or entry.get("key") != key or entry.get("topic") != list(topic.words)
            or entry.get("label", "") != topic.label):
        return None
    try:
        return Realisation(text=str(entry["text"]), attempts=int(entry["attempts"]), fallback=bool(entry["fallback"]),
                           shown=int(entry["shown"]), refused=tuple(str(w) for w in entry["refused"]),
                           written=bool(entry["written"]))
    except (KeyError, TypeError, ValueError):
        return None


def realised_drafts(topics: Sequence[Topic], example: str, spec: DPSynRAGSpec, ctx: MethodContext,
                    target_words: int = 0) -> list[Realisation]:
    """The public writer's document of each topic (post-processing of released topics: no charge), aiming at
    ``target_words`` (0: the form's sentences). Each is checkpointed as soon as it is final (``save_written``); a
    resumed run reuses those written for the same topic and settings (``load_written``) and writes only the rest, so
    resuming the writing charges nothing."""
    key = writing_key(ctx.task, example, spec.realisation_tokens, target_words)
    done = load_written(ctx.checkpoints, topics, key)

    def keep(index: int, doc: Realisation) -> None:
        save_written(ctx.checkpoints, index, topics[index], key, doc)

    settings = WriterSettings(
        spec.realisation_tokens, max_prompt_tokens=ctx.max_prompt_tokens,
        generator=writer_generator(ctx.llm.device, ctx.test_seed),  # OS entropy; seeded in test mode
        roles=RoleSources.of(spec.domain_lists),  # public role sources (docs/method.md §2.4c)
        target_words=target_words)
    return realise(topics, ctx.task, example, ctx.llm, ctx.reporter, settings, finished=done, on_final=keep)
