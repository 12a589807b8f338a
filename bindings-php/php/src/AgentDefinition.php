<?php

declare(strict_types=1);

namespace Phaseo\AgentSdk;

/**
 * An agent's definition, as in the product: `new AgentDefinition(id: 'support', tools: [...],
 * instructions: '...', toolExecution: ['toolConcurrency' => 4], requireApproval: fn (ToolCall
 * $toolCall, RuntimeContext $rt) => ...)`. `model`, `instructions`, `temperature`,
 * `maxOutputTokens`, `topP`, `toolChoice` and `activeTools` are values or `fn (array $turn)`.
 * `stopWhen` takes `AgentSdk::stepCountIs(3)`-style conditions or `fn (array $state)`.
 * `toolExecution: ['maxToolCalls' => 10]` bounds all tool calls of a run (a call beyond it
 * gets an error tool message; docs/behaviour.md §15); a run or continue may set its own.
 *
 * As with Tool, an argument of the wrong PHP type is PHP's TypeError naming the parameter;
 * what the types let through and is still wrong (a `tools` entry that is not a Tool, a hook
 * that is not callable, a value JSON cannot hold, …) is a DefinitionError naming the field
 * when the agent is created.
 */
final class AgentDefinition
{
    /**
     * @param list<Tool> $tools
     * @param list<array|callable>|array|callable|null $stopWhen
     * @param list<McpServer> $mcpServers
     * @param string|list<string>|null $stateSecret signing secret(s); the first signs
     */
    public function __construct(
        public readonly string $id,
        public readonly mixed $model = null,
        public readonly mixed $instructions = null,
        public readonly array $tools = [],
        public readonly ?int $maxSteps = null,
        public readonly mixed $humanReview = null,
        public readonly ?array $modelRetry = null,
        public readonly ?array $toolExecution = null,
        public readonly mixed $stopWhen = null,
        public readonly mixed $outputSchema = null,
        public readonly mixed $requireApproval = null,
        public readonly mixed $temperature = null,
        public readonly mixed $maxOutputTokens = null,
        public readonly mixed $topP = null,
        public readonly mixed $toolChoice = null,
        public readonly ?bool $parallelToolCalls = null,
        public readonly mixed $activeTools = null,
        public readonly string|array|null $stateSecret = null,
        public readonly RunStore|StateAccessor|null $store = null,
        public readonly array $mcpServers = [],
        public readonly ?array $lease = null,
    ) {
    }
}
