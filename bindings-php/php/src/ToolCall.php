<?php

declare(strict_types=1);

namespace Phaseo\AgentSdk;

/**
 * A tool call of the model, as in the product: `new ToolCall(id:, name:, input:)` with
 * public `$id` (unique in the run: the idempotency key of a side-effecting tool), `$name`
 * (the tool id) and `$input` (the arguments; the raw string when they were not JSON). What
 * `$runtime->toolCall` is and what the agent-level `requireApproval` receives. It also reads
 * as an array (`$call['id']`, `$call['name']`, `$call['input']`), read-only.
 *
 * @implements \ArrayAccess<string, mixed>
 */
final class ToolCall implements \ArrayAccess, \JsonSerializable
{
    private const FIELDS = ['id', 'name', 'input'];

    public function __construct(
        public readonly string $id,
        public readonly string $name,
        public readonly mixed $input = null,
    ) {
    }

    /** @internal from the core's `{id, name, input}` */
    public static function fromArray(array $call): self
    {
        return new self((string) ($call['id'] ?? ''), (string) ($call['name'] ?? ''), $call['input'] ?? null);
    }

    /** @return array{id: string, name: string, input: mixed} */
    public function toArray(): array
    {
        return ['id' => $this->id, 'name' => $this->name, 'input' => $this->input];
    }

    public function jsonSerialize(): array
    {
        return $this->toArray();
    }

    public function offsetExists(mixed $offset): bool
    {
        return in_array($offset, self::FIELDS, true) && $this->{$offset} !== null;
    }

    public function offsetGet(mixed $offset): mixed
    {
        if (!in_array($offset, self::FIELDS, true)) {
            throw new \OutOfBoundsException('a ToolCall has the keys id, name and input, not ' . json_encode($offset));
        }
        return $this->{$offset};
    }

    public function offsetSet(mixed $offset, mixed $value): void
    {
        throw new \LogicException('a ToolCall is read-only');
    }

    public function offsetUnset(mixed $offset): void
    {
        throw new \LogicException('a ToolCall is read-only');
    }
}
