<?php

// Loads the Phaseo Agent SDK's PHP layer (namespace Phaseo\AgentSdk). Needs the extension
// `phaseo_agent` (php -d extension=/path/to/libphaseo_agent_php.so, or an ini file).

declare(strict_types=1);

if (!function_exists('phaseo_poll')) {
    throw new \RuntimeException(
        'the phaseo_agent extension is not loaded: run php with -d extension=/path/to/libphaseo_agent_php.so'
        . ' (build it with `make php`)'
    );
}

foreach ([
    'Internal/Json.php', 'BigInt.php', 'Internal/Registry.php', 'Internal/Native.php', 'Internal/EndedState.php', 'Internal/Scheduler.php',
    'Internal/Spec.php', 'Errors.php', 'RunResult.php', 'ToolCall.php', 'RuntimeContext.php', 'Attributes.php', 'Internal/TypeSchema.php', 'Internal/TypedToolFactory.php', 'Tool.php', 'ToolRetry.php', 'ToolDecision.php',
    'AgentDefinition.php', 'Clients.php', 'GatewayAgentClientOptions.php', 'Stores.php', 'AgentStreamResult.php', 'Agent.php', 'AgentSdk.php',
] as $file) {
    require_once __DIR__ . '/src/' . $file;
}
