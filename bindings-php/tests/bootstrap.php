<?php

declare(strict_types=1);

require __DIR__ . '/../php/autoload.php';
require __DIR__ . '/Helpers.php';
