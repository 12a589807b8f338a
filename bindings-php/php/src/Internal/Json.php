<?php

declare(strict_types=1);

namespace Phaseo\AgentSdk\Internal;

/**
 * JSON text <-> PHP values (internal). JSON objects become associative arrays (so `{}`
 * arrives as `[]`); PHP writes `[]` as `[]` and `new \stdClass` / `(object) []` as `{}`.
 *
 * Every value is checked before PHP's `json_encode` sees it (docs/behaviour.md §7): nested
 * at most 64 levels (a state 64 + 8 from its root, plus 4 for each paused agent tool's
 * state it holds, agents nesting at most 8 deep), no cycle. `json_encode` recurses on the
 * C stack for each level and checks its own depth limit only on the way back up, so a value
 * nested thousands of levels deep overflows a Fiber's small stack (every PHP function of a
 * run runs in one) however small the limit it is given; and a cycle through references
 * would loop forever in any walk that does not look for it.
 */
final class Json
{
    private const ENCODE = JSON_THROW_ON_ERROR | JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE
        | JSON_PRESERVE_ZERO_FRACTION;

    /** Marks integers beyond PHP's int in the core's values (see BigInt). */
    public const BIG = "\u{1}phaseo:bigint:";

    /** The deepest nesting of a value: a scalar is depth 0, `['a' => 1]` depth 1. */
    public const MAX_DEPTH = 64;

    /**
     * The deepest nesting of a state from its root: the value limit plus the state's own,
     * and the paused agent tools' states it holds (4 levels each, at most 8); the core then
     * checks each state from its own root.
     */
    public const STATE_DEPTH = self::MAX_DEPTH + 8 + 4 * 8;

    /** The core's words for a value nested too deep (a state's limit is reported alike). */
    public const TOO_DEEP = 'value is nested more than 64 levels deep';

    /** The core's words for a value that holds itself. */
    public const CYCLE = 'value contains a cycle';

    /**
     * The JSON text of a value nested at most `$depth` levels. Throws \JsonException when it
     * has none: {@see TOO_DEEP}, {@see CYCLE}, `value cannot be read: …` (a jsonSerialize()
     * threw), or PHP's own reason (NaN or INF, text that is not UTF-8, a resource, …).
     */
    public static function encode(mixed $value, int $depth = self::MAX_DEPTH): string
    {
        $json = json_encode(self::plain($value, $depth), self::ENCODE, $depth + 1);
        if (str_contains($json, 'phaseo:bigint:')) {
            $json = (string) preg_replace('/"\\\\u0001phaseo:bigint:(\d+)"/', '$1', $json);
        }
        return $json;
    }

    /**
     * The value as `json_encode` may take it: checked to nest at most `$depth` levels with
     * no cycle, each JsonSerializable replaced by what its jsonSerialize() gave (called once
     * here, never again by json_encode). Arrays without such objects come back as they are.
     *
     * @throws \JsonException as encode()
     */
    public static function plain(mixed $value, int $depth = self::MAX_DEPTH): mixed
    {
        if (!is_array($value) && !is_object($value)) {
            return $value;
        }
        $path = [];
        $objects = [];
        $changed = false;
        return self::walk($value, $depth, $path, $objects, $changed);
    }

    /**
     * One array or object. PHP functions called from PHP do not grow the C stack, and the
     * walk goes at most `$depth` levels down, so it is safe on a Fiber's stack.
     *
     * @param int $left how many more levels may open here
     * @param list<array{0: ?array, 1: int|string|null}> $path each level's container and key
     * @param array<int, true> $objects the objects being walked (a cycle through objects)
     * @param bool $changed set when the value returned is not `$value` itself
     */
    private static function walk(mixed $value, int $left, array &$path, array &$objects, bool &$changed): mixed
    {
        $object = null;
        if (is_object($value)) {
            if ($value instanceof \UnitEnum || $value instanceof \Closure) {
                // json_encode writes a backed enum's value and refuses any other, and writes
                // a Closure as `{}` (whose array cast, unlike its JSON, holds the Closure).
                return $value;
            }
            $object = spl_object_id($value);
            if (isset($objects[$object])) {
                throw new ValueRefused(self::CYCLE);
            }
            if ($value instanceof \JsonSerializable) {
                $changed = true;
                $objects[$object] = true;
                try {
                    $inner = $value->jsonSerialize();
                } catch (\Throwable $e) {
                    throw new ValueRefused('value cannot be read: ' . Scheduler::message($e), 0, $e);
                }
                if ($inner !== $value) {
                    // What it gives stands in its place, at its level.
                    if (is_array($inner) || is_object($inner)) {
                        $path[] = [null, null];
                        $sub = false;
                        $inner = self::walk($inner, $left, $path, $objects, $sub);
                        array_pop($path);
                    }
                    unset($objects[$object]);
                    return $inner;
                }
                // Itself: its properties are written, as json_encode does.
            }
            $members = [];
            foreach ((array) $value as $key => $member) {
                // Private and protected properties (mangled names) are not written.
                if (!is_string($key) || $key === '' || $key[0] !== "\0") {
                    $members[$key] = $member;
                }
            }
        } else {
            $members = $value;
        }
        if ($left <= 0) {
            throw new ValueRefused(self::tooDeep($path));
        }
        if ($object !== null) {
            $objects[$object] = true;
        }
        $out = null;
        foreach ($members as $key => $member) {
            if (is_array($member) || is_object($member)) {
                $path[] = [$members, $key];
                $sub = false;
                $new = self::walk($member, $left - 1, $path, $objects, $sub);
                array_pop($path);
                if ($sub && $out === null) {
                    // The first member that changes: a new container from here on (writing
                    // into a copy of the application's array could write through its references).
                    $out = [];
                    foreach ($members as $before => $kept) {
                        if ($before === $key) {
                            break;
                        }
                        $out[$before] = $kept;
                    }
                }
                $member = $new;
            }
            if ($out !== null) {
                $out[$key] = $member;
            }
        }
        if ($object !== null) {
            unset($objects[$object]);
            if ($out === null && !$changed) {
                // Unchanged: json_encode writes it itself, exactly as PHP would.
                return $value;
            }
            $changed = true;
            return (object) ($out ?? $members);
        }
        if ($out !== null) {
            $changed = true;
            return $out;
        }
        return $value;
    }

    /**
     * Why a walk reached the depth limit: a cycle when the path goes through one PHP
     * reference twice (an array that holds itself, `$a['self'] = &$a`, can only do so through
     * a reference), or through one array's storage twice (`$a['x']['y'] = &$a` returned from a
     * function: a reference no variable holds any more, which PHP shows no code, but the
     * array found again inside itself is the same storage, `phaseo_array_id`); else too deep.
     *
     * @param list<array{0: ?array, 1: int|string|null}> $path
     */
    private static function tooDeep(array $path): string
    {
        $seen = [];
        $tables = [];
        foreach ($path as [$container, $key]) {
            if ($container === null) {
                continue;
            }
            $table = phaseo_array_id($container);
            if (isset($tables[$table])) {
                return self::CYCLE;
            }
            $tables[$table] = true;
            $reference = \ReflectionReference::fromArrayElement($container, $key);
            if ($reference !== null) {
                $id = $reference->getId();
                if (isset($seen[$id])) {
                    return self::CYCLE;
                }
                $seen[$id] = true;
            }
        }
        return self::TOO_DEEP;
    }

    /**
     * Why a value could not be written, for an error's message: the SDK's own refusal in the
     * core's words (`value is nested more than 64 levels deep`, as every language says it),
     * PHP's json_encode reason after what could not be written.
     */
    public static function reason(\Throwable $e, string $what): string
    {
        return $e instanceof ValueRefused ? $e->getMessage() : "{$what} cannot be written as JSON: " . Scheduler::message($e);
    }

    /** Any bytes as UTF-8 text: each byte that is not part of UTF-8 becomes U+FFFD (messages). */
    public static function text(string $bytes): string
    {
        if (preg_match('//u', $bytes) === 1) {
            return $bytes;
        }
        return (string) json_decode((string) json_encode($bytes, JSON_INVALID_UTF8_SUBSTITUTE));
    }

    /**
     * A value of JSON text, objects as associative arrays; integers above PHP's int (up to
     * 2^64-1) as BigInt, whether the core marked them or the text (a state) holds their digits.
     */
    public static function decode(string $text): mixed
    {
        if (preg_match('/\d{19}/', $text) === 1) {
            $text = self::markBigIntegers($text);
        }
        $value = json_decode($text, true, 512, JSON_THROW_ON_ERROR);
        return str_contains($text, 'phaseo:bigint:') ? self::bigIntegers($value) : $value;
    }

    /**
     * The text with each integer literal above PHP_INT_MAX and at most 2^64-1 written as a
     * marked string (json_decode would make it a float, losing digits). Strings are matched
     * whole first, so digits inside them are left alone.
     */
    private static function markBigIntegers(string $text): string
    {
        return (string) preg_replace_callback(
            '/"(?:[^"\\\\]++|\\\\.)*+"|(?<![\d.eE+-])\d{19,20}(?![\d.eE])/',
            static function (array $m): string {
                $digits = $m[0];
                $big = $digits[0] !== '"' && (strlen($digits) === 19
                    ? strcmp($digits, (string) PHP_INT_MAX) > 0
                    : strcmp($digits, '18446744073709551615') <= 0);
                return $big ? '"\\u0001phaseo:bigint:' . $digits . '"' : $digits;
            },
            $text,
        );
    }

    private static function bigIntegers(mixed $v): mixed
    {
        if (is_string($v) && str_starts_with($v, self::BIG)) {
            return new \Phaseo\AgentSdk\BigInt(substr($v, strlen(self::BIG)));
        }
        return is_array($v) ? array_map(self::bigIntegers(...), $v) : $v;
    }

    /**
     * A JSON Schema document as PHP writes it: empty arrays where the schema needs an
     * object (`'properties' => []`, a whole `[]` schema) become `{}`. Takes a value that
     * went through plain() (bounded, no cycle).
     */
    public static function schema(mixed $schema): mixed
    {
        if (!is_array($schema)) {
            return $schema;
        }
        if ($schema === []) {
            return new \stdClass();
        }
        if (array_is_list($schema)) {
            return array_map(static fn ($s) => self::schema($s), $schema);
        }
        $out = [];
        foreach ($schema as $key => $value) {
            $out[$key] = in_array($key, ['required', 'enum', 'type', 'examples', 'const', 'default'], true)
                ? $value
                : self::schema($value);
        }
        return $out;
    }
}

/** A value refused by the SDK's own rules (too deep, a cycle, a jsonSerialize() that threw). */
final class ValueRefused extends \JsonException
{
}
