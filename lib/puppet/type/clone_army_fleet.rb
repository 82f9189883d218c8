# frozen_string_literal: true

Puppet::Type.newtype(:clone_army_fleet) do
  @doc = <<-DOC
    @summary The clones' batched work in a Puppet run: what the clone_army_clone resources queued, done together.

    Removing and changing clones queues the slow part for the end of the
    run, so that a fleet of hundreds costs a few helper calls: the removals
    go with one `clone-army clone remove`, the clones to restart are stopped
    with one `clone-army clone stop`, and the new and restarted clones are
    started with one `clone-army clone start --ramp-up N` (N the largest
    `ramp_up` of the run). This resource does that work, after every
    clone_army_clone in the catalog (it requires them all by itself). It is
    in sync when nothing is queued; its change says what it did (`removed
    clone4; started clone5, clone6 over 30 s`).

    The new clones are made earlier, with one `clone-army clone
    create-many` when Puppet evaluates the first of them (one daemon-reload
    for them all: a reload costs more the more units systemd has, so one per
    clone would grow a fleet in O(N²)). A clone that cannot be made fails
    its own resource (the run exits 4 or 6 with `--detailed-exitcodes`, and
    no "created" is logged for it); a clone made ahead for a resource Puppet
    then skipped (a failed dependency, `--tags`) is removed again here.

    A clone that fails to start, restart or be removed is logged as an error
    against that clone, and fails this resource, so the run reports a
    failure (exit code 4 or 6 with `--detailed-exitcodes`). The class
    `clone_army` declares `clone_army_fleet { 'clone_army': }`; declare one
    yourself beside clone_army_clone resources of your own. Without one
    (`puppet resource clone_army_clone ...`), the same work is done when
    Puppet has evaluated every clone, and a failure is logged but does not
    fail the run.

    @example Clones of your own, with their batched work
      clone_army_clone { 'clone1':
        ensure   => running,
        base     => 'debian-12',
        server   => 'puppet.example.com',
        certname => 'clone1.load.example.com',
      }
      clone_army_fleet { 'clones': }
  DOC

  newparam(:name, namevar: true) do
    desc <<-DOC
      Any name; one resource is enough for every clone in the catalog.

      Example: `clone_army_fleet { 'clones': }`
    DOC
  end

  newproperty(:state) do
    desc <<-DOC
      `settled`, the only value and the default: the queued work of the run
      is done (it reads `pending` while some is queued).

      Example: `state => settled`
    DOC
    newvalues(:settled)
    defaultto :settled

    def change_to_s(_current, _should)
      provider.done || 'did the queued work'
    end
  end

  autorequire(:clone_army_clone) do
    catalog.resources.select { |resource| resource.type == :clone_army_clone }.map(&:title)
  end
end
