-- lib.lua is prepended to every script. Every script gets KEYS[1] = the
-- room's cfg key (it routes the script on Redis Cluster) and ARGV[1] = the
-- room's key prefix "wr:{room}:". All of a room's keys share its hash tag.
local P = ARGV[1]
local function I(x) return string.format('%.0f', x) end
local function nowUs()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000000 + tonumber(t[2])
end

-- Liveness: P..'seen' holds a 2-byte cell per ticket, at offset 2*ticket,
-- with the 2 s epoch in which its visitor was last seen (mod 65535, plus 1;
-- 0 means unknown). 2 bytes per ticket keeps a waiting visitor small.
local EPOCH_US = 2000000
local function seenValue(now) return math.floor(now / EPOCH_US) % 65535 + 1 end
local function markSeen(ticket, now)
  local v = seenValue(now)
  redis.call('SETRANGE', P .. 'seen', 2 * ticket, string.char(math.floor(v / 256), v % 256))
end
local function alive(ticket, now, abandonUs)
  if abandonUs <= 0 then return true end
  local b = redis.call('GETRANGE', P .. 'seen', 2 * ticket, 2 * ticket + 1)
  if #b < 2 then return true end
  local v = string.byte(b, 1) * 256 + string.byte(b, 2)
  if v == 0 then return true end
  return ((seenValue(now) - v) % 65535) * EPOCH_US <= abandonUs
end
local function abandonUs()
  return (tonumber(redis.call('HGET', P .. 'cfg', 'abandonAfterSeconds')) or 0) * 1000000
end

-- depart takes a waiting ticket out of the line and records it, so that
-- every instance can lower the ranks behind it at the next tick.
local function depart(visitor, ticket)
  redis.call('ZREM', P .. 'queue', visitor)
  redis.call('INCR', P .. 'left')
  redis.call('ZADD', P .. 'departed', I(ticket), I(ticket))
  redis.call('RPUSH', P .. 'departed:new', I(ticket))
end
