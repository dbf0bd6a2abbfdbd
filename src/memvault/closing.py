"""Mixins that close an object when the ``with`` (or ``async with``) block around it ends."""

from __future__ import annotations

from typing import Self


class Closing:
    """``with obj:`` closes ``obj`` on the way out, error or not."""

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncClosing:
    """``async with obj:`` awaits ``obj.aclose()`` on the way out, error or not."""

    async def aclose(self) -> None:
        raise NotImplementedError

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
