-- KEYS: rate
-- wake.lua: wakes a sleeping room (see wake in lib.lua), after a change of
-- its settings: the next tick of every instance runs it again.
-- Reply: 1 when it slept, 0 when it was awake
local n = redis.call('HEXISTS', K.rate, 'asleep')
wake()
return n
