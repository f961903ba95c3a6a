-- KEYS: active sessions
-- active_sessions.lua (GATE): the number of live sessions: those recorded
-- less those past their expiry that admit.lua has not swept yet.
-- Reply: count
local _, stale = staleMembers(math.floor(nowUs() / 1000))
return redis.call('HLEN', K.sessions) - stale
