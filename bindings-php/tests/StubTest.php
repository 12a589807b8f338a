<?php

declare(strict_types=1);

namespace Phaseo\AgentSdk\Tests;

use PHPUnit\Framework\TestCase;

/** The IDE stub file declares exactly the extension's functions, with their parameters. */
final class StubTest extends TestCase
{
    public function testStubMatchesTheExtension(): void
    {
        $this->assertTrue(extension_loaded('phaseo_agent'));
        $stub = (string) file_get_contents(__DIR__ . '/../php/phaseo_agent.stub.php');
        preg_match_all('/^function (\w+)\(([^)]*)\)/m', $stub, $m, PREG_SET_ORDER);
        $declared = [];
        foreach ($m as [, $name, $params]) {
            preg_match_all('/\$(\w+)/', $params, $p);
            $declared[$name] = $p[1];
        }
        $actual = [];
        foreach (get_extension_funcs('phaseo_agent') as $name) {
            $actual[$name] = array_map(fn ($p) => $p->getName(), (new \ReflectionFunction($name))->getParameters());
        }
        ksort($declared);
        ksort($actual);
        $this->assertSame($actual, $declared);
    }
}
