"""Absolute links to the project and to its rule pages, read from the installed package's metadata
(`project_urls` in setup.cfg). None where the metadata names no URL: a relative path would point
into the user's repository, where the pages are not."""

from __future__ import annotations

import functools
import importlib.metadata

DISTRIBUTION = "tfproc-lint"


@functools.lru_cache(maxsize=None)
def project_urls() -> dict[str, str]:
    """Label -> URL from the metadata's `Project-URL: Label, URL` entries."""
    try:
        entries = importlib.metadata.metadata(DISTRIBUTION).get_all("Project-URL") or []
    except importlib.metadata.PackageNotFoundError:
        return {}
    urls = {}
    for entry in entries:
        label, _, url = entry.partition(",")
        if url.strip().startswith(("https://", "http://")):
            urls[label.strip().lower()] = url.strip().rstrip("/")
    return urls


def information_url() -> str | None:
    urls = project_urls()
    return urls.get("documentation") or urls.get("source")


def rule_url(code: str) -> str | None:
    """The rule's page in the source repository (docs/rules/CODE.md on the main branch)."""
    source = project_urls().get("source")
    return f"{source}/blob/main/docs/rules/{code}.md" if source else None
