<?php

declare(strict_types=1);

namespace Phaseo\AgentSdk;

/**
 * An integer PHP's `int` cannot hold (above PHP_INT_MAX, up to 2^64-1: the SDK's values
 * are 64-bit integers, docs/behaviour.md §7). Values from the SDK hold one where such a number was;
 * writing it back (returning it, a context, …) writes the exact number.
 */
final class BigInt implements \JsonSerializable, \Stringable
{
    /** The largest integer a value may hold (docs/behaviour.md §7: integers fit 64 bits). */
    private const MAX = '18446744073709551615';

    /**
     * @param string $digits the decimal digits, at most 2^64-1 (a larger integer could not
     *        be written into any value: InvalidArgumentException here, not a refusal later)
     */
    public function __construct(public readonly string $digits)
    {
        if (preg_match('/^[0-9]+$/D', $digits) !== 1) {
            throw new \InvalidArgumentException("BigInt: not decimal digits: {$digits}");
        }
        $significant = ltrim($digits, '0');
        if (strlen($significant) > strlen(self::MAX) || (strlen($significant) === strlen(self::MAX) && strcmp($significant, self::MAX) > 0)) {
            throw new \InvalidArgumentException("BigInt: {$digits} does not fit in 64 bits");
        }
    }

    public function __toString(): string
    {
        return $this->digits;
    }

    public function jsonSerialize(): string
    {
        // Without leading zeros: JSON has no `007`.
        return Internal\Json::BIG . (ltrim($this->digits, '0') ?: '0');
    }
}
