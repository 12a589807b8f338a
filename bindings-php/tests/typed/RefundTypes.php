<?php

declare(strict_types=1);

namespace Phaseo\AgentSdk\Tests\Typed;

use Phaseo\AgentSdk\Description;
use Phaseo\AgentSdk\ListOf;
use Phaseo\AgentSdk\RuntimeContext;
use Phaseo\AgentSdk\Tool;

/** Why a customer asks for a refund. */
enum RefundReason: string
{
    case Damaged = 'damaged';
    case Late = 'late';
    case Other = 'other';
}

#[Description('One line of the order')]
final class OrderLine
{
    public function __construct(
        #[Description('Stock keeping unit')] public readonly string $sku,
        #[Description('How many were bought')] public readonly int $quantity,
    ) {
    }
}

#[Description('Who is refunded')]
final class Customer
{
    public function __construct(
        #[Description('Where the receipt goes')] public readonly string $email,
        public readonly bool $vip = false,
    ) {
    }
}

/** The refund of every binding's typed-tool tests (tests/typed-tools/refund_schema.json). */
#[Description('A refund for an order')]
final class Refund
{
    /** @param list<OrderLine>|null $lines */
    public function __construct(
        #[Description('The order to refund')] public readonly string $order_id,
        #[Description('Amount in euros')] public readonly float $amount,
        #[Description('Why the customer asks')] public readonly RefundReason $reason,
        #[Description('The lines refunded (all when left out)'), ListOf(OrderLine::class)] public readonly ?array $lines = null,
        public readonly ?Customer $customer = null,
        #[Description('A note for the ledger')] public readonly ?string $note = null,
    ) {
    }
}

/** What the refund tool answers. */
final class Receipt
{
    public function __construct(
        public readonly string $order_id,
        public readonly float $refunded,
        public readonly int $lines,
    ) {
    }
}

/** A category tree: a recursive type. */
final class Category
{
    /** @param list<Category>|null $children */
    public function __construct(
        #[Description('Category name')] public readonly string $name,
        #[Description('Sub-categories'), ListOf(Category::class)] public readonly ?array $children = null,
    ) {
    }
}

/** The refund tool of the tests and the handoff worker: approval first, then a receipt. */
final class RefundTool
{
    /** @param list<Refund> $executions */
    public static function create(array &$executions): Tool
    {
        return Tool::fromClass(
            'refund',
            Refund::class,
            function (Refund $refund, RuntimeContext $runtime) use (&$executions): Receipt {
                $executions[] = $refund;
                $lines = array_sum(array_map(fn (OrderLine $l) => $l->quantity, $refund->lines ?? []));
                return new Receipt($refund->order_id, $refund->amount, $lines);
            },
            description: 'Refunds an order',
            requireApproval: true,
        );
    }
}
