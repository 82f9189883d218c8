# frozen_string_literal: true

require_relative 'spec_helper_acceptance'

# A ramp-up longer than the helper's call limit runs to its end: `clone start
# --ramp-up N` sleeps through its ramp, so the Puppet side gives it its call
# limit plus N, and never stops it part-way (which would then start the rest
# of the fleet at once).
#
# The call limit is a figure of the module's schema.json (15 minutes in a
# release): a ramp past it would make this example take that long. So the
# example applies a copy of the module (the checkout is bound read-only) whose
# schema.json has that figure lowered. The Ruby side reads its limits from
# there exactly as a release does, so no test knob is needed in the module.
# The ramp spreads the starts of the clones a run creates: the fleet of clone1
# and clone2 is made (or found) and removed first, so the apply creates all
# three and starts them in one ramp; the fleet is left as it was found.
RSpec.describe 'a ramp-up longer than the helper call limit' do
  fleet = ['clone1', 'clone2'].freeze
  clones = (fleet + ['clone3']).freeze
  call_limit = 20
  # Three waves, at 0, 20 and 40 s: the last begins twice the call limit in.
  ramp_up = 60
  modules = '/root/ramp-up-modules'
  lower_limit = <<~'RUBY'
    path, seconds = ARGV
    schema = JSON.parse(File.read(path))
    schema.fetch('waits')['call_seconds'] = Integer(seconds)
    File.write(path, "#{JSON.pretty_generate(schema)}\n")
  RUBY

  before(:all) do
    settled = SandboxHarness.apply(class_manifest(num_clones: fleet.size), timeout: 1200)
    raise "the fleet did not settle: #{settled}" unless [0, 2].include?(settled.exitstatus)

    on_sandbox!(SandboxHarness::HELPER, 'clone', 'remove', '--', *fleet, timeout: 300)
    copy = <<~SH
      set -e
      rm -rf #{modules}
      mkdir -p #{modules}/clone_army
      cd #{SandboxHarness::MODULE_BOUND}
      cp -r files lib manifests metadata.json tasks templates types #{modules}/clone_army/
    SH
    on_sandbox!('sh', '-c', copy, timeout: 120)
    on_sandbox!('ruby', '-rjson', '-e', lower_limit, "#{modules}/clone_army/lib/puppet_x/clone_army/schema.json",
                call_limit.to_s, timeout: 60)
    manifest = class_manifest(num_clones: clones.size, ramp_up: ramp_up)
    SandboxHarness.log "puppet apply --modulepath #{modules} -e #{manifest.inspect}"
    @apply = on_sandbox('puppet', 'apply', '--modulepath', modules, '--detailed-exitcodes', '--color=false',
                        '-e', manifest, timeout: 1800)
  end

  after(:all) do
    on_sandbox('rm', '-rf', modules, timeout: 60)
    SandboxHarness.apply(class_manifest(num_clones: fleet.size), timeout: 1200)
  end

  it 'applies without an error, the helper never stopped at its call limit' do
    expect(@apply.exitstatus).to eq(2), @apply.to_s
    expect(@apply.output).not_to match(%r{^Error:|helper-timeout|did not finish within|one clone at a time}), @apply.to_s
  end

  it 'starts every clone, the last wave longer after the first than the call limit' do
    ok = wait_for(timeout: 120, interval: 2) do
      listed = clone_list.to_h { |c| [c['name'], c['state']] }
      clones.all? { |c| listed[c] == 'running' }
    end
    expect(ok).to be_truthy, diagnostics
    started = clones.map do |clone|
      unit_property("puppet-clone-army@#{clone}.service", 'ActiveEnterTimestampMonotonic').to_i / 1_000_000.0
    end
    spread = started.max - started.min
    expect(spread).to be > call_limit, "the clones started #{spread.round(1)} s apart (#{started.inspect}):\n#{@apply}"
    expect(spread).to be >= (ramp_up * 2 / 3) - 5, "the clones started #{spread.round(1)} s apart, not over the ramp"
  end
end
