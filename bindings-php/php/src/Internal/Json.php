<?php

declare(strict_types=1);

namespace Phaseo\AgentSdk\Internal;

/**
 * JSON text <-> PHP values (internal). JSON objects become associative arrays (so `{}`
 * arrives as `[]`); PHP writes `[]` as `[]` and `new \stdClass` / `(object) []` as `{}`.
 */
final class Json
{
    private const ENCODE = JSON_THROW_ON_ERROR | JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE
        | JSON_PRESERVE_ZERO_FRACTION;

    /** Marks integers beyond PHP's int in the core's values (see BigInt). */
    public const BIG = "\u{1}phaseo:bigint:";

    /** The JSON text of a value; throws \JsonException (with PHP's reason) when it has none. */
    public static function encode(mixed $value): string
    {
        $json = json_encode($value, self::ENCODE, 512);
        if (str_contains($json, 'phaseo:bigint:')) {
            $json = (string) preg_replace('/"\\\\u0001phaseo:bigint:(\d+)"/', '$1', $json);
        }
        return $json;
    }

    /** A value of JSON text, objects as associative arrays. */
    public static function decode(string $text): mixed
    {
        $value = json_decode($text, true, 512, JSON_THROW_ON_ERROR);
        return str_contains($text, 'phaseo:bigint:') ? self::bigIntegers($value) : $value;
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
     * object (`'properties' => []`, a whole `[]` schema) become `{}`.
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
