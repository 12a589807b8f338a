<?php

declare(strict_types=1);

namespace Phaseo\AgentSdk\Internal;

use Phaseo\AgentSdk\DefinitionError;
use Phaseo\AgentSdk\RuntimeContext;
use Phaseo\AgentSdk\Tool;

/**
 * Tools defined from PHP types instead of a hand-written JSON Schema (docs/behaviour.md §20):
 * `Tool::fromFunction` and `Tool::fromClass`. The generated schema is the tool's
 * `parameters` (with `strict: true`, its strict form, made by the core), checked by the core
 * on every call; the arguments are then decoded into the declared types before `execute`
 * runs. A value that cannot be decoded is a tool input error (`Invalid tool input:
 * <pointer>: <reason>`), which `onError: 'return-to-model'` sends back to the model. A
 * class as the result type (`output:`, or `execute`'s declared return type) gives the
 * output schema; results are written as their public properties.
 */
trait TypedToolFactory
{
    /**
     * A tool from a function's typed parameters: `Tool::fromFunction('forecast',
     * fn (#[Description('City name')] string $city, int $days = 3) => ...)`. A parameter typed
     * `RuntimeContext` receives the runtime. Other `Tool` fields by name (`requireApproval:`,
     * `onError:`, ...).
     */
    public static function fromFunction(string $id, callable $execute, ?string $description = null, bool $strict = false, mixed ...$options): Tool
    {
        $function = new \ReflectionFunction(\Closure::fromCallable($execute));
        $params = TypeSchema::functionParameters($function);
        $schema = TypeSchema::ofFunction($function);
        $call = function (mixed $input, ?RuntimeContext $runtime) use ($function, $params, $execute): array {
            $args = TypeSchema::arguments($params, $input);
            foreach ($function->getParameters() as $p) {
                if (TypeSchema::isRuntime($p)) {
                    $args[$p->getName()] = $runtime;
                }
            }
            return $args;
        };
        return self::typed($id, $description, $strict, $schema, fn ($input) => $call($input, null),
            fn ($input, $runtime) => TypeSchema::plain($execute(...$call($input, $runtime))),
            self::returnClass($function), $options);
    }

    /**
     * A tool whose arguments are a class (its constructor parameters, with `#[Description]`
     * and `#[ListOf]`): `Tool::fromClass('refund', Refund::class, fn (Refund $r, RuntimeContext
     * $rt) => new Receipt(...))`. `execute` null makes a manual tool. `output:` (or
     * `execute`'s declared return class) gives the output schema.
     */
    public static function fromClass(string $id, string $input, ?callable $execute = null, ?string $output = null,
        ?string $description = null, bool $strict = false, mixed ...$options): Tool
    {
        $schema = TypeSchema::ofClass($input);
        if ($output === null && $execute !== null) {
            $output = self::returnClass(new \ReflectionFunction(\Closure::fromCallable($execute)));
        }
        $run = $execute === null ? null
            : fn ($value, $runtime) => TypeSchema::plain($execute(TypeSchema::decode($input, $value), $runtime));
        return self::typed($id, $description, $strict, $schema, fn ($value) => TypeSchema::decode($input, $value), $run, $output, $options);
    }

    private static function typed(string $id, ?string $description, bool $strict, array $schema, \Closure $decode,
        ?\Closure $run, ?string $output, array $options): Tool
    {
        foreach (['parameters', 'inputSchema', 'outputSchema', 'execute'] as $taken) {
            if (array_key_exists($taken, $options)) {
                throw new DefinitionError("Invalid definition of tool '$id': a typed tool sets $taken itself; leave it out", 'definition_invalid');
            }
        }
        if ($strict) {
            $schema = Json::decode(Native::call(fn () => phaseo_schema_strict(Json::encode($schema))));
        }
        return new Tool(...[
            'id' => $id,
            'execute' => $run,
            'description' => $description,
            'parameters' => $schema,
            // Runs after the core checked `parameters`: what the schema cannot say (an int's
            // range) is refused here, before approval or execute.
            'inputSchema' => function ($value) use ($decode) {
                $decode($value);
                return $value;
            },
            'outputSchema' => $output === null ? null : TypeSchema::ofClass($output),
            'strict' => $strict ?: null,
        ], ...$options);
    }

    private static function returnClass(\ReflectionFunctionAbstract $function): ?string
    {
        $type = $function->getReturnType();
        if ($type instanceof \ReflectionNamedType && !$type->isBuiltin() && class_exists($type->getName()) && !enum_exists($type->getName())) {
            return $type->getName();
        }
        return null;
    }
}
