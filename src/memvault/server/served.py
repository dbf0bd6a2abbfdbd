"""The operations whose routes are derived from the remote catalogue
(:func:`.routes.served`): their endpoint's path parameters and fields are the operation's
arguments, and the operation's codec encodes the answer. A route with work of its own (a
batch's numbering, a compaction's two steps, a turn that waits for its learning, the context's
two operations) keeps its handler in its wing's module."""

from __future__ import annotations

from ..rest import operations as ops

STORE = (
    ops.WRITE,
    ops.LIST,
    ops.UPDATE,
    ops.DELETE,
    ops.PROMOTE,
    ops.DELETE_BY_SCOPE,
    ops.RETRIEVE,
    ops.SEARCH,
    ops.COUNT,
    ops.PURGE_EXPIRED,
    ops.FINISH_ERASURES,
    ops.APPLY_RETENTION,
    ops.AUDIT,
)
FACILITIES = (
    ops.CREATE_SESSION,
    ops.LIST_SESSIONS,
    ops.GET_SESSION,
    ops.DELETE_SESSION,
    ops.SESSION_BUNDLE,
    ops.APPEND_RECORD,
    ops.RECORDS,
    ops.SEARCH_RECORDS,
    ops.SEARCH_SESSIONS,
    ops.ADD_SESSION_MEMORY,
    ops.SESSION_MEMORY,
    ops.ADD_FINDING,
    ops.FINDINGS,
    ops.ADD_GLOBAL_MEMORY,
    ops.GLOBAL_MEMORY,
    ops.PIN,
    ops.DEMOTE,
    ops.SYSTEM_PROMPT,
)
LEARNING = (ops.EXTRACT, ops.HISTORY, ops.RESTORE, ops.SUPERSEDED)
AGENTS = (
    ops.RECORD_EXECUTION,
    ops.EXECUTIONS,
    ops.SEARCH_EXECUTIONS,
    ops.STRATEGY_STATS,
    ops.CHOOSE_STRATEGY,
    ops.RECORD_DECOMPOSITION,
    ops.SUGGEST_DECOMPOSITION,
    ops.FAILURE_PATTERNS,
    ops.CHECK_FAILURES,
)
SERVED = (*STORE, *FACILITIES, *LEARNING, *AGENTS)
