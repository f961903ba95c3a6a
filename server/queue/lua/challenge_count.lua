-- KEYS: cfg powcur powprev draw
-- challenge_count.lua: counts a challenge issued to a client of a network
-- in the room, and answers the recent rates, over a sliding window made of
-- two fixed windows of ARGV[3] ms (the previous one weighted by the part of
-- it still inside the sliding window), by Redis TIME: the network's
-- challenges issued, and the room's proved joins (counted by position.lua,
-- so that fetching challenges without solving them raises nobody else's
-- price). Nothing is counted when the room's challenge is off, or when
-- the room takes no joins (before its pre-queue or opening, after its
-- closing). The hash keeps at most ARGV[5] networks' fields a window;
-- past that, new networks share one field ('n~').
-- ARGV: 2 the client's network ('' if unknown), 3 the window, ms, 4 the
--   server's default challenge (for a room saved without one), 5 the most
--   fields of powcur
-- Reply: {code, challenge mode, network rate, room rate, phase,
--   prequeueAt, opensAt, closesAt, nowMs} (rates per second, as strings);
--   code -1 unknown room, 0 the room takes no joins now (phase scheduled
--   or closed; nothing counted), 1 otherwise
local stored = redis.call('HGET', K.cfg, 'challenge')
if not stored and redis.call('EXISTS', K.cfg) == 0 then return {-1, '', '0', '0', '', 0, 0, 0, 0} end
local mode = challengeMode(stored, ARGV[4])
if mode == 'off' then return {1, 'off', '0', '0', '', 0, 0, 0, 0} end
local nowMs = math.floor(nowUs() / 1000)
local ph, sc = phase(nowMs)
if ph == 'scheduled' or ph == 'closed' then
  return {0, mode, '0', '0', ph, sc[1], sc[2], sc[3], nowMs}
end
local win = tonumber(ARGV[3])
local frac = powRoll(win, nowMs)
local net = '0'
if ARGV[2] ~= '' then
  local f = 'n' .. ARGV[2]
  if redis.call('HLEN', K.powcur) >= (tonumber(ARGV[5]) or 0) and redis.call('HEXISTS', K.powcur, f) == 0 then
    f = 'n~'
  end
  net = powRate(f, 1, frac, win)
end
return {1, mode, net, powRate('+', 0, frac, win), ph, sc[1], sc[2], sc[3], nowMs}
