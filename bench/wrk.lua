-- wrk's side of the load run (bench/load.py): POST /validate with a body
-- drawn at random from a JSON-lines file, as oha's -Z draws the mix, and a
-- JSON summary on stdout.
--
--   wrk -t2 -c32 -d20s -s bench/wrk.lua https://127.0.0.1:8443 -- bodies.jsonl

local thread_count = 0

function setup(thread)
  thread_count = thread_count + 1
  thread:set("id", thread_count)
end

local bodies = {}

function init(args)
  local path = args[1]
  if not path then
    error("usage: wrk ... -s wrk.lua URL -- BODIES.jsonl")
  end
  local file = assert(io.open(path, "r"))
  for line in file:lines() do
    if line:match("%S") then
      bodies[#bodies + 1] = line
    end
  end
  file:close()
  if #bodies == 0 then
    error(path .. " holds no bodies")
  end
  -- A different, fixed sequence per thread.
  math.randomseed(1000 + (id or 0))
  wrk.method = "POST"
  wrk.path = "/validate"
  wrk.headers["Content-Type"] = "application/json"
end

function request()
  return wrk.format(nil, nil, nil, bodies[math.random(#bodies)])
end

function done(summary, latency, requests)
  local errors = summary.errors
  io.write(string.format(
    '{"requests":%d,"duration_us":%d,"p50_us":%d,"p99_us":%d,"p99_9_us":%d,' ..
    '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d}}\n',
    summary.requests, summary.duration,
    latency:percentile(50), latency:percentile(99), latency:percentile(99.9),
    errors.connect, errors.read, errors.write, errors.status, errors.timeout))
end
