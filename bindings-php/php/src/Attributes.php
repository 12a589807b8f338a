<?php

declare(strict_types=1);

namespace Phaseo\AgentSdk;

/**
 * The description of a tool's input or output class, or of one of its parameters, sent to
 * the model in the generated schema (docs/behaviour.md §20): `#[Description('The order to refund')]`.
 */
#[\Attribute(\Attribute::TARGET_CLASS | \Attribute::TARGET_PARAMETER | \Attribute::TARGET_PROPERTY)]
final class Description
{
    public function __construct(public readonly string $text)
    {
    }
}

/**
 * The item type of an `array` parameter, which PHP cannot declare: `#[ListOf(OrderLine::class)]`
 * or `#[ListOf('string')]` (`'string'`, `'int'`, `'float'`, `'bool'`, `'mixed'` or a class).
 */
#[\Attribute(\Attribute::TARGET_PARAMETER | \Attribute::TARGET_PROPERTY)]
final class ListOf
{
    public function __construct(public readonly string $type)
    {
    }
}
