-- KEYS: seen* seenbase*
-- seen.lua: marks the tickets of visitors connected over SSE as seen, so
-- that they are not taken for abandoned. One call per room per tick.
-- ARGV: 2.. tickets: of the room's first line, or "i:ticket" of its line
--   i (from 0; LINES)
local now = nowUs()
local bases = {}
for a = 2, #ARGV do
  local i, t = string.match(ARGV[a], '^(%d+):(%d+)$')
  if i then i, t = tonumber(i) + 1, tonumber(t) else i, t = 1, tonumber(ARGV[a]) end
  if t and LK[i] then
    useLine(i)
    if not bases[i] then bases[i] = seenBase() end
    markSeen(t, now, bases[i])
  end
end
return #ARGV - 1
