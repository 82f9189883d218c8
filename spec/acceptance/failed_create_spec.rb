# frozen_string_literal: true

require_relative 'spec_helper_acceptance'

# A clone that cannot be created (its base does not exist) fails its own
# resource through each entry point: the class with a clone beside it, a
# clone_army_clone resource on its own, `puppet resource`. A failed resource
# shows as its failed event's error line ("change from 'absent' to ...
# failed"), never as "created", and the run exits 4 or 6 with
# --detailed-exitcodes. Runs after clone_army_spec.rb (clone1 and clone2
# running) and leaves that behind; on its own it makes that fleet first.
RSpec.describe 'a clone that cannot be created' do
  fleet = ['clone1', 'clone2'].freeze
  boot_timeout = 120

  # The resource of a clone on a base that does not exist.
  def lost_clone(ensure_value)
    "clone_army_clone { 'clonex': ensure => #{ensure_value}, base => 'no-such-base' }"
  end

  def running?(clones)
    listed = clone_list.to_h { |clone| [clone['name'], clone['state']] }
    clones.all? { |clone| listed[clone] == 'running' } && (clones - machines).empty?
  end

  # What every entry point shows for clonex: its failed event, no "created",
  # and nothing made.
  def expect_failed_create(result, ensure_value)
    change = "change from '?absent'? to '?#{ensure_value}'? failed"
    failed = %r{Clone_army_clone\[clonex\]/ensure: #{change}: cannot create clone clonex: base "no-such-base" does not exist}
    expect(result.output).to match(failed), result.to_s
    expect(result.output).not_to match(%r{Clone_army_clone\[clonex\]/ensure: created}), result.to_s
    expect(clone_list.map { |clone| clone['name'] }).not_to include('clonex')
  end

  before(:all) do
    settled = SandboxHarness.apply(class_manifest(num_clones: fleet.size), timeout: 1200)
    raise "the fleet did not settle: #{settled}" unless [0, 2].include?(settled.exitstatus)
    raise "clone1 and clone2 are not running\n#{diagnostics}" unless wait_for(timeout: boot_timeout) { running?(fleet) }
  end

  context 'beside the class, whose new clone3 is made in the same run' do
    before(:all) do
      @result = SandboxHarness.apply("#{class_manifest(num_clones: 3)} #{lost_clone('present')}", timeout: 600)
    end

    after(:all) do
      SandboxHarness.apply(class_manifest(num_clones: fleet.size), timeout: 600)
    end

    it 'fails the run (exit 4 or 6) with the failed event of clonex, and no "created" for it' do
      expect([4, 6]).to include(@result.exitstatus), @result.to_s
      expect_failed_create(@result, 'present')
    end

    it 'makes and starts clone3, its sibling in the batch' do
      expect(@result.output).to match(%r{Clone_army_clone\[clone3\]/ensure: created and started}), @result.to_s
      expect(wait_for(timeout: boot_timeout) { running?(['clone3']) }).to be_truthy, diagnostics
    end
  end

  ['present', 'running'].each do |ensure_value|
    context "a clone_army_clone resource on its own, ensure => #{ensure_value}" do
      it 'fails the run (exit 4 or 6) with its failed event, and no "created"' do
        result = SandboxHarness.apply(lost_clone(ensure_value), timeout: 300)
        expect([4, 6]).to include(result.exitstatus), result.to_s
        expect_failed_create(result, ensure_value)
      end
    end
  end

  context 'puppet resource clone_army_clone clonex ensure=present base=no-such-base' do
    argv = ['puppet', 'resource', '--color=false', 'clone_army_clone', 'clonex', 'ensure=present', 'base=no-such-base']

    # `puppet resource` exits 0 whatever failed unless given --fail (Puppet
    # 8.6 and later; Puppet 7 has no such flag): each Puppet is held to what
    # it can say.
    it 'shows the failed event, and exits 1 with --fail where Puppet has it, else prints the clone absent' do
      fail_flag = on_sandbox!('puppet', 'resource', '--help', timeout: 120).stdout.include?('--fail')
      result = on_sandbox(*argv, *(fail_flag ? ['--fail'] : []), timeout: 300)
      expect_failed_create(result, 'present')
      if fail_flag
        expect(result.exitstatus).to eq(1), result.to_s
        expect(result.stderr).to include('Failed to manage resource Clone_army_clone[clonex]'), result.to_s
      else
        expect(result.exitstatus).to eq(0), result.to_s
        expect(result.stdout).to match(%r{clone_army_clone \{ 'clonex':\s*\n\s*ensure\s*=> 'absent',}m), result.to_s
      end
    end
  end

  context 'after every entry point' do
    it 'leaves clone1 and clone2 running, and no other clone' do
      expect(wait_for(timeout: boot_timeout) { running?(fleet) }).to be_truthy, diagnostics
      expect(clone_list.map { |clone| clone['name'] }.sort).to eq(fleet)
    end
  end
end
