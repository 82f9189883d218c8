# The lab's `web` role (LAB_ROLE=web make lab): every clone classified with
# lab_roles::web (sandbox/roles/lab_roles), run in noop by the lab.
node /^clone[0-9]+\./ {
  include lab_roles::web
}

node default {}
