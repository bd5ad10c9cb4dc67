-- 80% GET /customers/{random id in 1..N}, 10% GET /customers?email=customer{random in 1..N}@example.com,
-- 10% POST /customers with a new e-mail (unique per run and wrk thread).
--   wrk -t 2 -c 64 -d 30s --latency -s mix.lua http://127.0.0.1:PORT -- N [NONCE]
script_name, script_needs_n = "mix", true
dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "common.lua")

function request()
  local r = math.random(100)
  if r <= 80 then return get_request() end
  if r <= 90 then return lookup_request() end
  return create_request()
end
