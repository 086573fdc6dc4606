<?php
// The front controller of examples/multi-site.yaml's PHP site: every path that names no file.
header('Content-Type: text/plain; charset=utf-8');
echo "shop: {$_SERVER['REQUEST_METHOD']} {$_SERVER['REQUEST_URI']}\n";
