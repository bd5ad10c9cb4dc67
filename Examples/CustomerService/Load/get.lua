-- GET /customers/{random id in 1..N}.
--   wrk -t 2 -c 64 -d 10s --latency -s get.lua http://127.0.0.1:PORT -- N
script_name, script_needs_n = "get", true
dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "common.lua")
request = get_request
