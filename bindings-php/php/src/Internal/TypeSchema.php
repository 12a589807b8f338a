<?php

declare(strict_types=1);

namespace Phaseo\AgentSdk\Internal;

use Phaseo\AgentSdk\DefinitionError;
use Phaseo\AgentSdk\Description;
use Phaseo\AgentSdk\ListOf;
use Phaseo\AgentSdk\RuntimeContext;

/**
 * JSON Schemas from PHP types and JSON values decoded into them (docs/behaviour.md §20).
 * An object is a parameter list: a class's constructor parameters, or a function's own
 * (a parameter typed `RuntimeContext` is left out: it receives the runtime). A parameter
 * without a default is required; `?T $x = null` is an optional T. Types: `string`, `int`,
 * `float` (integers accepted), `bool`, `mixed` (any value), a backed enum (its values),
 * a class (an object of its constructor parameters), `array` with `#[ListOf(...)]`.
 * A class inside itself is written once and referenced (`#` for the root, others under
 * `$defs`).
 */
final class TypeSchema
{
    /** @var list<string> classes met again inside themselves */
    private array $recursive = [];
    /** @var array<string, array> */
    private array $defs = [];

    private function __construct(private readonly ?string $root)
    {
    }

    /** The schema of a class's constructor parameters. */
    public static function ofClass(string $class): array
    {
        if (!class_exists($class) || enum_exists($class)) {
            throw self::definition("the input type must be a class with constructor parameters, got '$class'");
        }
        $writer = new self($class);
        $writer->findRecursive($class, []);
        return $writer->root(self::parameters(new \ReflectionClass($class)), self::classDescription($class));
    }

    /** The schema of a function's parameters (a `RuntimeContext` parameter left out). */
    public static function ofFunction(\ReflectionFunctionAbstract $function): array
    {
        $writer = new self(null);
        $params = self::functionParameters($function);
        foreach ($params as $p) {
            $writer->findRecursiveIn($p, []);
        }
        return $writer->root($params, null);
    }

    /** The parameters of a function that take the model's arguments. */
    public static function functionParameters(\ReflectionFunctionAbstract $function): array
    {
        return array_values(array_filter(
            $function->getParameters(),
            fn (\ReflectionParameter $p) => !self::isRuntime($p),
        ));
    }

    /** Whether a parameter receives the runtime. */
    public static function isRuntime(\ReflectionParameter $p): bool
    {
        $type = $p->getType();
        return $type instanceof \ReflectionNamedType && $type->getName() === RuntimeContext::class;
    }

    /**
     * The named arguments for parameters from a JSON object; throws \InvalidArgumentException
     * `<pointer>: <reason>` for a value that does not fit.
     *
     * @param list<\ReflectionParameter> $params
     */
    public static function arguments(array $params, mixed $value, string $path = ''): array
    {
        if ($value instanceof \stdClass) {
            $value = (array) $value;
        }
        if (!is_array($value) || (array_is_list($value) && $value !== [])) {
            throw self::invalid($path, 'expected an object, got ' . self::kind($value));
        }
        $args = [];
        foreach ($params as $p) {
            $name = $p->getName();
            if (!array_key_exists($name, $value) || ($value[$name] === null && $p->isDefaultValueAvailable())) {
                if (!$p->isDefaultValueAvailable()) {
                    throw self::invalid($path, "missing required property \"$name\"");
                }
                $args[$name] = $p->getDefaultValue();
                continue;
            }
            $args[$name] = self::value($p->getType(), self::listOf($p), $value[$name], $path . '/' . self::escape($name), $name);
        }
        return $args;
    }

    /** A JSON value decoded into a class (its constructor called with named arguments). */
    public static function decode(string $class, mixed $value, string $path = ''): object
    {
        $reflection = new \ReflectionClass($class);
        $args = self::arguments(self::parameters($reflection), $value, $path);
        return $reflection->newInstanceArgs($args);
    }

    /** A value of a declared type as plain JSON data (objects as their public properties). */
    public static function plain(mixed $value): mixed
    {
        if ($value instanceof \BackedEnum) {
            return $value->value;
        }
        if ($value instanceof \JsonSerializable || $value instanceof \stdClass || $value instanceof \Phaseo\AgentSdk\BigInt) {
            return $value;
        }
        if (is_object($value)) {
            $out = [];
            foreach ((new \ReflectionObject($value))->getProperties(\ReflectionProperty::IS_PUBLIC) as $prop) {
                if ($prop->isStatic() || !$prop->isInitialized($value)) {
                    continue;
                }
                $v = $prop->getValue($value);
                if ($v !== null) {
                    $out[$prop->getName()] = self::plain($v);
                }
            }
            return $out === [] ? new \stdClass() : $out;
        }
        if (is_array($value)) {
            return array_map(self::plain(...), $value);
        }
        return $value;
    }

    private function root(array $params, ?string $description): array
    {
        $schema = $this->object($params, $description, $this->root ?? 'execute');
        foreach ($this->recursive as $class) {
            if ($class !== $this->root) {
                $this->defs[self::shortName($class)] = $this->classObject($class);
            }
        }
        if ($this->defs !== []) {
            $schema['$defs'] = $this->defs;
        }
        return $schema;
    }

    private function classObject(string $class): array
    {
        return $this->object(self::parameters(new \ReflectionClass($class)), self::classDescription($class), $class);
    }

    /** @param list<\ReflectionParameter> $params */
    private function object(array $params, ?string $description, string $where): array
    {
        $schema = ['type' => 'object'];
        if ($description !== null) {
            $schema['description'] = $description;
        }
        $properties = [];
        $required = [];
        foreach ($params as $p) {
            // `?T $x = null` is an optional T: left out, not null, when there is nothing to say.
            $optional = $p->isDefaultValueAvailable() && $p->getDefaultValue() === null;
            $s = $this->type($p->getType(), self::listOf($p), self::shortName($where) . '::$' . $p->getName(), $optional);
            $text = self::description($p);
            if ($text !== null) {
                $s['description'] = $text;
            }
            if ($p->isDefaultValueAvailable()) {
                $default = $p->getDefaultValue();
                if ($default !== null) {
                    $s['default'] = self::plain($default);
                }
            } else {
                $required[] = $p->getName();
            }
            $properties[$p->getName()] = $s;
        }
        $schema['properties'] = $properties === [] ? new \stdClass() : $properties;
        if ($required !== []) {
            $schema['required'] = $required;
        }
        return $schema;
    }

    private function type(?\ReflectionType $type, ?string $listOf, string $where, bool $optional): array
    {
        if ($type === null) {
            throw self::definition("$where has no type: declare one (mixed for any value)");
        }
        if (!$type instanceof \ReflectionNamedType) {
            throw self::definition("$where: union and intersection types have no JSON Schema form here");
        }
        $name = $type->getName();
        $nullable = $type->allowsNull() && $name !== 'mixed' && !$optional;
        $schema = $this->named($name, $listOf, $where);
        return $nullable ? self::nullable($schema) : $schema;
    }

    private function named(string $name, ?string $listOf, string $where): array
    {
        switch ($name) {
            case 'string':
                return ['type' => 'string'];
            case 'int':
                return ['type' => 'integer'];
            case 'float':
                return ['type' => 'number'];
            case 'bool':
                return ['type' => 'boolean'];
            case 'mixed':
                return [];
            case 'array':
                if ($listOf === null) {
                    throw self::definition("$where: an array needs #[ListOf(<type>)] for its items");
                }
                return ['type' => 'array', 'items' => $this->named(ltrim($listOf, '?'), null, $where . '[]')];
        }
        if (enum_exists($name) && is_subclass_of($name, \BackedEnum::class)) {
            $values = array_map(fn ($case) => $case->value, $name::cases());
            return ['type' => is_int($values[0] ?? '') ? 'integer' : 'string', 'enum' => $values];
        }
        if (class_exists($name) && !enum_exists($name) && $name !== RuntimeContext::class) {
            if (in_array($name, $this->recursive, true)) {
                return ['$ref' => $name === $this->root ? '#' : '#/$defs/' . self::shortName($name)];
            }
            return $this->classObject($name);
        }
        throw self::definition("$where: the type $name has no JSON Schema form (use string, int, float, bool, "
            . 'mixed, a backed enum, a class, or array with #[ListOf])');
    }

    private function findRecursive(string $class, array $stack): void
    {
        if (in_array($class, $stack, true)) {
            if (!in_array($class, $this->recursive, true)) {
                $this->recursive[] = $class;
            }
            return;
        }
        $stack[] = $class;
        foreach (self::parameters(new \ReflectionClass($class)) as $p) {
            $this->findRecursiveIn($p, $stack);
        }
    }

    private function findRecursiveIn(\ReflectionParameter $p, array $stack): void
    {
        $type = $p->getType();
        $names = [];
        if ($type instanceof \ReflectionNamedType) {
            $names[] = $type->getName();
        }
        $list = self::listOf($p);
        if ($list !== null) {
            $names[] = ltrim($list, '?');
        }
        foreach ($names as $name) {
            if (class_exists($name) && !enum_exists($name) && $name !== RuntimeContext::class) {
                $this->findRecursive($name, $stack);
            }
        }
    }

    private static function value(?\ReflectionType $type, ?string $listOf, mixed $value, string $path, string $name): mixed
    {
        $typeName = $type instanceof \ReflectionNamedType ? $type->getName() : 'mixed';
        if ($value === null) {
            if ($type === null || $type->allowsNull()) {
                return null;
            }
            throw self::invalid($path, 'must not be null');
        }
        return self::namedValue($typeName, $listOf, $value, $path);
    }

    private static function namedValue(string $name, ?string $listOf, mixed $value, string $path): mixed
    {
        switch ($name) {
            case 'mixed':
                return $value;
            case 'string':
                return is_string($value) ? $value : throw self::invalid($path, 'expected a string, got ' . self::kind($value));
            case 'int':
                if ($value instanceof \Phaseo\AgentSdk\BigInt) {
                    throw self::invalid($path, "$value is out of range for int");
                }
                if (is_float($value) && floor($value) === $value && abs($value) < 9.2e18) {
                    return (int) $value;
                }
                return is_int($value) ? $value : throw self::invalid($path, 'expected an integer, got ' . self::kind($value));
            case 'float':
                return is_int($value) || is_float($value) ? (float) $value : throw self::invalid($path, 'expected a number, got ' . self::kind($value));
            case 'bool':
                return is_bool($value) ? $value : throw self::invalid($path, 'expected a boolean, got ' . self::kind($value));
            case 'array':
                if (!is_array($value) || !array_is_list($value)) {
                    throw self::invalid($path, 'expected an array, got ' . self::kind($value));
                }
                $item = ltrim((string) $listOf, '?');
                $out = [];
                foreach ($value as $i => $v) {
                    $out[] = $v === null && str_starts_with((string) $listOf, '?') ? null
                        : self::namedValue($item, null, $v, "$path/$i");
                }
                return $out;
        }
        if (enum_exists($name)) {
            $case = (is_string($value) || is_int($value)) ? $name::tryFrom($value) : null;
            if ($case === null) {
                $values = array_map(fn ($c) => $c->value, $name::cases());
                throw self::invalid($path, json_encode($value) . ' is not one of ' . json_encode($values));
            }
            return $case;
        }
        return self::decode($name, $value, $path);
    }

    private static function parameters(\ReflectionClass $class): array
    {
        $constructor = $class->getConstructor();
        return $constructor === null ? [] : $constructor->getParameters();
    }

    private static function listOf(\ReflectionParameter $p): ?string
    {
        $attributes = $p->getAttributes(ListOf::class);
        return $attributes === [] ? null : $attributes[0]->newInstance()->type;
    }

    private static function description(\ReflectionParameter $p): ?string
    {
        $attributes = $p->getAttributes(Description::class);
        return $attributes === [] ? null : $attributes[0]->newInstance()->text;
    }

    private static function classDescription(string $class): ?string
    {
        $attributes = (new \ReflectionClass($class))->getAttributes(Description::class);
        return $attributes === [] ? null : $attributes[0]->newInstance()->text;
    }

    private static function nullable(array $schema): array
    {
        if (isset($schema['type']) && is_string($schema['type'])) {
            $schema['type'] = [$schema['type'], 'null'];
            if (isset($schema['enum'])) {
                $schema['enum'][] = null;
            }
            return $schema;
        }
        return ['anyOf' => [$schema, ['type' => 'null']]];
    }

    private static function shortName(string $class): string
    {
        $at = strrpos($class, '\\');
        return $at === false ? $class : substr($class, $at + 1);
    }

    private static function escape(string $name): string
    {
        return str_replace(['~', '/'], ['~0', '~1'], $name);
    }

    private static function kind(mixed $v): string
    {
        return match (true) {
            $v === null => 'null',
            is_bool($v) => 'a boolean',
            is_string($v) => 'a string',
            is_int($v), $v instanceof \Phaseo\AgentSdk\BigInt => 'an integer',
            is_float($v) => 'a number',
            is_array($v) && array_is_list($v) && $v !== [] => 'an array',
            default => 'an object',
        };
    }

    private static function invalid(string $path, string $reason): \InvalidArgumentException
    {
        return new \InvalidArgumentException(($path === '' ? '/' : $path) . ': ' . $reason);
    }

    private static function definition(string $message): DefinitionError
    {
        return new DefinitionError('Invalid tool type: ' . $message, 'definition_invalid');
    }
}
