"""The research example's tool: a tiny, deterministic document search."""

import re

STOP_WORDS = {"what", "are", "the", "how", "can", "does", "there", "and", "for"}

DOCS = [
    {"id": "kb-1", "title": "Rotating API keys", "text": "Keys can be rotated from the dashboard at any time."},
    {"id": "kb-2", "title": "Rate limits", "text": "Free plans allow 60 requests a minute."},
    {"id": "kb-3", "title": "Data export", "text": "Exports are CSV files sent by email."},
    {"id": "kb-4", "title": "Key scopes", "text": "A key can be limited to read-only access."},
]


def search_docs(query: str, limit: int = 3) -> list[dict]:
    """Documents whose title or text shares a word with the query, best match first."""
    stems = {word[:5] for word in re.findall(r"[a-z]+", query.lower()) if len(word) > 2 and word not in STOP_WORDS}
    scored = []
    for doc in DOCS:
        doc_stems = {word[:5] for word in re.findall(r"[a-z]+", f"{doc['title']} {doc['text']}".lower())}
        score = len(stems & doc_stems)
        if score:
            scored.append((-score, doc["id"], {"id": doc["id"], "title": doc["title"]}))
    return [hit for _, _, hit in sorted(scored)[: int(limit)]]
