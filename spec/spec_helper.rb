# frozen_string_literal: true

# rspec-mocks only (no mocha); must be chosen before puppetlabs_spec_helper
# loads, or it defaults to mocha.
RSpec.configure do |config|
  config.mock_with :rspec
end

require 'json'
require 'tmpdir'
require 'puppetlabs_spec_helper/module_spec_helper'
require 'rspec-puppet-facts'
require 'puppet_x/clone_army/runner'

include RspecPuppetFacts # rubocop:disable Style/MixinUsage

# The library under test, from this checkout (providers and types are also
# loaded by rspec-puppet through the fixture symlink).
$LOAD_PATH.unshift(File.expand_path('../lib', __dir__))

# Answers of the `clone-army` helper, one stdout document per file
# (spec/fixtures/helper/README.md).
module HelperFixtures
  DIR = File.expand_path('fixtures/helper', __dir__)

  def helper_fixture(name)
    File.read(File.join(DIR, name))
  end

  # What PuppetX::CloneArmy::Runner.run returns: stdout, stderr, exit status.
  # `changes` ({ 'base' => 'debian-13' }) are merged into the one object the
  # answer describes (`result.clone` or `result.base`), for a scene the
  # generated fixtures do not hold.
  def helper_output(name, exitstatus = 0, changes = {})
    text = helper_fixture(name)
    unless changes.empty?
      document = JSON.parse(text)
      entity = document['result']['clone'] || document['result']['base']
      entity.merge!(changes)
      text = document.to_json
    end
    PuppetX::CloneArmy::Runner::Result.new(text, '', exitstatus)
  end
end

# The platforms the class specs compile for. metadata.json lists only what the
# acceptance suite runs on; COMPILED_ONLY are the platforms the class is
# written for that no acceptance test runs on, so their specs still pin what
# it declares there. facterdb (Debian's 1.12) has no facts for Debian 12 and
# 13 or the Ubuntu LTS releases, so those get the minimal facts the class reads.
module PlatformFacts
  COMPILED_ONLY = [
    { 'operatingsystem' => 'Debian', 'operatingsystemrelease' => ['11'] },
    { 'operatingsystem' => 'RedHat', 'operatingsystemrelease' => ['8', '9'] },
    { 'operatingsystem' => 'CentOS', 'operatingsystemrelease' => ['8', '9'] },
    { 'operatingsystem' => 'Rocky', 'operatingsystemrelease' => ['8', '9'] },
    { 'operatingsystem' => 'AlmaLinux', 'operatingsystemrelease' => ['8', '9'] },
  ].freeze

  # [name, family, release, codename] of the platforms facterdb lacks.
  NOT_IN_FACTERDB = [
    ['Debian', 'Debian', '12', 'bookworm'],
    ['Debian', 'Debian', '13', 'trixie'],
    ['Ubuntu', 'Debian', '22.04', 'jammy'],
    ['Ubuntu', 'Debian', '24.04', 'noble'],
  ].freeze

  module_function

  def minimal_facts(name, family, release, codename)
    {
      kernel: 'Linux',
      processors: { 'count' => 2 },
      os: {
        'name' => name, 'family' => family, 'hardware' => 'x86_64', 'architecture' => 'amd64',
        'release' => { 'major' => release, 'full' => release },
        'distro' => { 'codename' => codename }
      },
      networking: { 'fqdn' => 'loadhost.example.com', 'hostname' => 'loadhost', 'domain' => 'example.com' },
    }
  end

  def written_facts
    NOT_IN_FACTERDB.to_h do |name, family, release, codename|
      ["#{name.downcase}-#{release}-x86_64", minimal_facts(name, family, release, codename)]
    end
  end

  # metadata.json's platforms, each as "<os>-<release>-x86_64".
  def supported_keys
    meta = JSON.parse(File.read(File.expand_path('../metadata.json', __dir__)))
    meta['operatingsystem_support'].flat_map do |os|
      os['operatingsystemrelease'].map { |release| "#{os['operatingsystem'].downcase}-#{release}-x86_64" }
    end
  end

  # Facts of every platform the class specs compile for, by key; each supported
  # platform must have some.
  def compiled_os
    facts = on_supported_os(supported_os: COMPILED_ONLY).merge(written_facts)
    missing = supported_keys - facts.keys
    raise "no facts to test metadata.json's #{missing.join(', ')} with" unless missing.empty?

    facts
  end
end

# Whether the module carries its helper binary (files/clone-army): a release
# tarball does, a git checkout does not, and this checkout only after `make
# build`. Class clone_army asks with find_file('clone_army/clone-army'); the
# specs say which module they compile against, by default one that carries
# it (a file that exists, so find_file's own existence check passes).
module ModuleHelperBinary
  def module_carries_helper(carries)
    allow(Puppet::Parser::Files).to receive(:find_file).and_call_original
    allow(Puppet::Parser::Files).to receive(:find_file).with('clone_army/clone-army', anything)
                                                       .and_return(carries ? __FILE__ : nil)
  end
end

RSpec.configure do |config|
  config.include HelperFixtures
  config.include ModuleHelperBinary
  config.before(:each) do
    module_carries_helper(true)
    # What Puppet 8 enforces by default: no unknown variables, no deprecated
    # or ambiguous constructs.
    Puppet[:strict_variables] = true
    Puppet[:strict] = :error
  end
end

# A real executable file standing in for the helper, so the "is it installed"
# check runs for real; the specs stub only PuppetX::CloneArmy::Runner.run.
RSpec.shared_context 'with a helper binary' do
  around(:each) do |example|
    Dir.mktmpdir('clone-army-spec') do |dir|
      @helper_dir = dir
      File.write(File.join(dir, 'clone-army'), "#!/bin/sh\nexit 99\n")
      File.chmod(0o755, File.join(dir, 'clone-army'))
      example.run
    end
  end

  let(:helper_path) { File.join(@helper_dir, 'clone-army') }

  # Expects exactly one run of the helper with `args`, answering `fixture`
  # (with `changes`, see helper_output).
  def expect_helper(args, fixture, exitstatus = 0, changes = {})
    expect(PuppetX::CloneArmy::Runner).to receive(:run)
      .with([helper_path, *args], timeout: PuppetX::CloneArmy::Helper.timeout_for(args))
      .once
      .ordered
      .and_return(helper_output(fixture, exitstatus, changes))
  end
end
