-- KEYS: seen seenbase
-- seen.lua: marks the tickets of visitors connected over SSE as seen, so
-- that they are not taken for abandoned. One call per room per tick.
-- ARGV: 2.. tickets
local now = nowUs()
local base = seenBase()
for i = 2, #ARGV do markSeen(tonumber(ARGV[i]), now, base) end
return #ARGV - 1
