"""Routes as values: an endpoint of the API (method, path, accepted fields; declared in the
catalogue, :mod:`memvault.api`) and its handler — and the OpenAPI document built from them
(pure), so the API description can never drift from what the server accepts or the client
sends."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request

from ..api.operation import Operation
from ..memory import AsyncMemory
from ..rest.endpoints import Endpoint
from ..rest.fields import Field, fields, query_fields
from .request import read_json, request_query

Answer = tuple[int, Any]


@dataclass(frozen=True, slots=True)
class Call:
    """What a handler gets: the path parameters and the checked arguments."""

    path: Mapping[str, str]
    args: dict[str, Any]


Handler = Callable[[AsyncMemory, Call], Awaitable[Answer]]


@dataclass(frozen=True, slots=True)
class Route:
    """An endpoint and the handler that serves it."""

    endpoint: Endpoint
    handler: Handler

    @property
    def method(self) -> str:
        return self.endpoint.method

    @property
    def path(self) -> str:
        return self.endpoint.path

    @property
    def body(self) -> Mapping[str, Field] | None:
        return self.endpoint.body

    @property
    def query(self) -> Mapping[str, Field] | None:
        return self.endpoint.query

    @property
    def required(self) -> tuple[str, ...]:
        return self.endpoint.required

    @property
    def status(self) -> int:
        return self.endpoint.status

    @property
    def answer(self) -> str:
        return self.endpoint.answer

    async def arguments(self, request: Request) -> dict[str, Any]:
        if self.body is not None:
            return fields(await read_json(request), self.body, self.required)
        if self.query is not None:
            return query_fields(request_query(request), self.query, self.required)
        return {}


def served(operation: Operation[Any, Any]) -> Route:
    """The route of an operation that needs nothing of its own on the server: the endpoint's
    path parameters and fields are the operation's arguments, and its answer is the result as
    the operation's codec encodes it (the remote client decodes with the same codec)."""
    name = operation.name

    async def handler(memory: AsyncMemory, call: Call) -> Answer:
        return answered(operation, await getattr(memory, name)(**call.path, **call.args))

    handler.__name__, handler.__doc__ = name, operation.plan.__doc__
    return Route(operation.sent_to, handler)


def answered(operation: Operation[Any, Any], result: Any) -> Answer:
    """The status and body of ``result``, as the operation's codec says (the client decodes
    the body with it)."""
    status = operation.answer.status(result, operation.sent_to.status)
    return status, operation.answer.encode(result)


ERROR = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["type", "message"],
            "properties": {"type": {"type": "string"}, "message": {"type": "string"}},
        }
    },
}


def _optional(schema: Mapping[str, Any]) -> dict[str, Any]:
    return {"anyOf": [dict(schema), {"type": "null"}]}


def _object(accepted: Mapping[str, Field], required: Sequence[str]) -> dict[str, Any]:
    properties = {
        name: dict(f.schema) if name in required else _optional(f.schema)
        for name, f in accepted.items()
    }
    schema: dict[str, Any] = {
        "type": "object",
        "properties": properties,
        "additionalProperties": False,
    }
    if required:
        schema["required"] = list(required)
    return schema


def _operation(route: Route) -> dict[str, Any]:
    names = route.endpoint.parameters
    parameters: list[dict[str, Any]] = [
        {"name": n, "in": "path", "required": True, "schema": {"type": "string"}} for n in names
    ]
    for name, f in (route.query or {}).items():
        schema = {"type": "array", "items": f.schema} if f.repeats else dict(f.schema)
        parameters.append(
            {"name": name, "in": "query", "required": name in route.required, "schema": schema}
        )
    operation: dict[str, Any] = {
        "operationId": route.handler.__name__,
        "summary": (route.handler.__doc__ or "").strip().split("\n")[0],
        "parameters": parameters,
        "responses": {
            str(route.status): {
                "description": route.answer,
                "content": {"application/json": {"schema": {}}},
            },
            "default": {
                "description": "an error",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
            },
        },
    }
    if route.body is not None:
        operation["requestBody"] = {
            "required": bool(route.required),
            "content": {"application/json": {"schema": _object(route.body, route.required)}},
        }
    return operation


def openapi(routes: Sequence[Route], version: str, authenticated: bool) -> dict[str, Any]:
    """The OpenAPI 3.1 document of ``routes``."""
    paths: dict[str, dict[str, Any]] = {}
    for route in routes:
        paths.setdefault(route.endpoint.template, {})[route.method.lower()] = _operation(route)
    document: dict[str, Any] = {
        "openapi": "3.1.0",
        "info": {
            "title": "memvault",
            "version": version,
            "description": "Long-term memory for LLM agents (docs/server.md).",
        },
        "paths": paths,
        "components": {"schemas": {"Error": ERROR}},
    }
    if authenticated:
        document["components"]["securitySchemes"] = {"key": {"type": "http", "scheme": "bearer"}}
        document["security"] = [{"key": []}]
    return document
