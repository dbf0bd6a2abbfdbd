"""Agent memory: what an orchestrator keeps of its own work — executions, strategy statistics
and choice, task decompositions, failure patterns — on the scoped store."""
