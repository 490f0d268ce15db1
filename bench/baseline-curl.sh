#!/usr/bin/env bash
# Baseline for the export figure: the loop a user writes without sgq. One curl per page, jq
# prints the records and reads next_page, until it is null.
# Usage: SGQ_BASE_URL=… SGQ_API_KEY=… bash bench/baseline-curl.sh USER
set -euo pipefail
user=$1
page=1
while [ "$page" != null ]; do
  resp=$(curl -sS --fail -X POST "$SGQ_BASE_URL/api/graph/get_followers" \
    -H "x-api-key: $SGQ_API_KEY" -H 'content-type: application/json' \
    -d "{\"user\":\"$user\",\"how\":\"username\",\"page\":$page}")
  jq -c '.data[]' <<<"$resp"
  page=$(jq '.next_page' <<<"$resp")
done
