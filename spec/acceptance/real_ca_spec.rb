# frozen_string_literal: true

require 'yaml'
require_relative 'spec_helper_acceptance'

# Clones against a CA with Puppet's default `allow_duplicate_certs = false`
# (what Puppet Server and PE have; the sandbox's server keeps it): a clone
# made again under its certname must come back with the key and certificate
# it had, or the CA refuses it and it never checks in again. Its SSL
# directory lives on the load host, per certname, and outlives the clone
# (README, "Certificates"). Then the clean-up of removed clones: the
# clone_army::clean_certs task run for real on the sandbox's server, and a
# clone whose SSL directory was forgotten getting a new certificate.
#
# Self-sufficient: it applies the fleet it needs (two clones on the default
# base, built if missing) and leaves the fleet as it found it (two clones on
# the default base). In the suite (files in alphabetical order) it runs after
# masterless_apply_spec.rb and before server_classification_spec.rb, which
# finds the two clones it expects. The base change builds a second base
# (a debootstrap, about a minute here) and removes it at the end.
RSpec.describe 'clones against a CA that refuses duplicate certificates' do
  clones = ['clone1', 'clone2'].freeze
  second_base = 'real-ca-b'
  # The module as sandbox.sh binds it into the sandbox (its modulepath).
  task = '/etc/puppet/code/modules/clone_army/tasks/clean_certs.rb'
  # The CA's fingerprints of the clones' first certificates.
  fingerprints = {}

  # A run comes at the latest one runinterval (RUNINTERVAL) plus clone2's phase
  # (half of it) after a start, after the certificate is there.
  def checkin_timeout
    Integer(ENV.fetch('CHECKIN_TIMEOUT', 420))
  end

  def certname(clone)
    "#{clone}.#{host_certname}"
  end

  # An apply that must succeed (0 or 2) without errors.
  def apply_ok(manifest, timeout: 600)
    result = SandboxHarness.apply(manifest, timeout: timeout)
    expect([0, 2]).to include(result.exitstatus), "#{result}\n#{diagnostics}"
    expect(result.output).not_to match(%r{^Error:}), result.to_s
    result
  end

  # The clone's own record of its last run: last_run_summary.yaml in its upper
  # layer (a clone made again has a new upper layer, so any summary there is
  # from a run of the new clone). nil when there is none yet.
  def last_run(clone)
    path = "/var/lib/puppet-clone-army/#{clone}-overlay/var/cache/puppet/public/last_run_summary.yaml"
    result = on_sandbox('cat', path, timeout: 30)
    return nil unless result.exitstatus.zero?

    summary = YAML.safe_load(result.stdout)
    { at: summary.dig('time', 'last_run').to_i,
      failed: summary.dig('events', 'failure').to_i + summary.dig('resources', 'failed').to_i,
      catalog: summary.dig('version', 'config') }
  rescue Psych::Exception
    nil
  end

  # Whether the clone has run against the server since `since` (sandbox
  # epoch seconds), with a catalog and no failure.
  def checked_in_since?(clone, since)
    run = last_run(clone)
    run && run[:at] >= since && run[:failed].zero? && !run[:catalog].nil?
  end

  def expect_checkins(names, since)
    ok = wait_for(timeout: checkin_timeout, interval: 5) { names.all? { |c| checked_in_since?(c, since) } }
    expect(ok).to be_truthy,
                  "no successful run since #{since} from #{names.reject { |c| checked_in_since?(c, since) }}: " \
                  "#{names.to_h { |c| [c, last_run(c)] }}\n#{agent_journal(names)}\n#{diagnostics}"
  end

  def agent_journal(names)
    names.map { |c| on_sandbox('journalctl', '-M', c, '--no-pager', '-n', '15', '-u', 'puppet', timeout: 60).to_s }.join("\n")
  end

  # certname => SHA256 fingerprint, for every certificate `puppetserver ca list --all` lists.
  def ca_certs
    out = on_sandbox!('puppetserver', 'ca', 'list', '--all', timeout: 120).stdout
    out.lines.filter_map do |line|
      name, fingerprint = line.match(%r{^\s+(\S+)\s+\(SHA256\)\s+(\S+)})&.captures
      [name, fingerprint] if name
    end.to_h
  end

  def ssl_dirs
    doc = JSON.parse(on_sandbox!(SandboxHarness::HELPER, 'ssl', 'list', timeout: 60).stdout)
    doc.dig('result', 'ssl_dirs').to_h { |d| [d['certname'], d] }
  end

  # The task's script as Bolt runs it: its parameters as JSON on stdin.
  def run_task(script, params)
    result = on_sandbox('sh', '-c', 'printf %s "$1" | "$2"', 'sh', JSON.generate(params), script, timeout: 300)
    [JSON.parse(result.stdout), result]
  rescue JSON::ParserError
    raise "the task printed no JSON: #{result}"
  end

  before(:all) do
    @since = sandbox_now
    apply_ok(class_manifest(num_clones: clones.size), timeout: Integer(ENV.fetch('FIRST_APPLY_TIMEOUT', 1200)))
    @base = clone_list.find { |c| c['name'] == 'clone1' }.fetch('base')
  end

  it 'runs against a CA with allow_duplicate_certs = false, and every clone checks in' do
    setting = on_sandbox!('puppet', 'config', 'print', 'allow_duplicate_certs', '--section', 'server', timeout: 60)
    expect(setting.stdout.strip).to eq('false')
    expect_checkins(clones, @since)
  end

  it "keeps each clone's SSL directory on the host, bound read-write at the agent's ssldir" do
    dirs = ssl_dirs
    clones.each do |clone|
      dir = "/var/lib/puppet-clone-army/.ssl/#{certname(clone)}"
      expect(dirs[certname(clone)]).to include('clone' => clone, 'path' => dir)
      settings = on_sandbox!('cat', "/etc/systemd/nspawn/#{clone}.nspawn", timeout: 30).stdout
      expect(settings).to include("\nBind=#{dir}:/var/lib/puppet/ssl\n")
      # The agent's certificate is there, the one the CA signed.
      expect(on_sandbox('test', '-s', "#{dir}/certs/#{certname(clone)}.pem", timeout: 30).exitstatus).to eq(0)
      expect(on_sandbox('test', '-e', "/var/lib/puppet-clone-army/#{clone}-overlay/var/lib/puppet/ssl/certs",
                        timeout: 30).exitstatus).to eq(1)
    end
    expect(on_sandbox!('stat', '-c', '%a', '/var/lib/puppet-clone-army/.ssl', timeout: 30).stdout.strip).to eq('700')
    fingerprints.replace(ca_certs.slice(*clones.map { |c| certname(c) }))
    expect(fingerprints.size).to eq(2), ca_certs.to_s
  end

  context 'shrinking the fleet 2 -> 1 and growing it back to 2' do
    it 'removes clone2 and keeps its SSL directory' do
      apply_ok(class_manifest(num_clones: 1))
      expect(clone_traces('clone2')).to eq([])
      expect(ssl_dirs[certname('clone2')]).to include('clone' => nil)
    end

    it 'has clone2, made again, check in with the certificate it had' do
      since = sandbox_now
      apply_ok(class_manifest(num_clones: 2))
      expect_checkins(['clone2'], since)
      expect(ca_certs.slice(*fingerprints.keys)).to eq(fingerprints)
    end
  end

  context "moving the clones to another base (#{second_base})" do
    it 'makes both clones again on the new base, and they check in with their certificates' do
      since = sandbox_now
      apply_ok(class_manifest(num_clones: 2, base: second_base), timeout: 1200)
      expect(clone_list.to_h { |c| [c['name'], c['base']] }).to eq(clones.to_h { |c| [c, second_base] })
      expect_checkins(clones, since)
      expect(ca_certs.slice(*fingerprints.keys)).to eq(fingerprints)
    end

    it 'moves them back and removes the second base' do
      since = sandbox_now
      apply_ok(class_manifest(num_clones: 2))
      expect(clone_list.map { |c| c['base'] }.uniq).to eq([@base])
      removed = on_sandbox(SandboxHarness::HELPER, 'base', 'remove', second_base, timeout: 300)
      expect(removed.exitstatus).to eq(0), removed.to_s
      expect_checkins(clones, since)
    end
  end

  context 'puppet resource clone_army_clone clone2 ensure=absent, then present' do
    it 'removes clone2, keeping its SSL directory' do
      result = on_sandbox('puppet', 'resource', '--color=false', 'clone_army_clone', 'clone2', 'ensure=absent', timeout: 300)
      expect(result.exitstatus).to eq(0), result.to_s
      expect(result.output).not_to match(%r{^Error:}), "#{result}\n#{diagnostics}"
      expect(clone_traces('clone2')).to eq([])
      expect(ssl_dirs[certname('clone2')]).to include('clone' => nil)
    end

    it 'makes clone2 again, which checks in with the certificate it had' do
      since = sandbox_now
      result = on_sandbox('puppet', 'resource', '--color=false', 'clone_army_clone', 'clone2', 'ensure=running',
                          "base=#{@base}", "server=#{SandboxHarness::SERVER}", "certname=#{certname('clone2')}",
                          "runinterval=#{SandboxHarness::RUNINTERVAL}", timeout: 300)
      expect(result.exitstatus).to eq(0), result.to_s
      expect(result.output).not_to match(%r{^Error:}), result.to_s
      expect_checkins(['clone2'], since)
      expect(ca_certs.slice(*fingerprints.keys)).to eq(fingerprints)
    end
  end

  context 'cleaning removed clones: clone_army::clean_certs on the server, then ssl forget on the load host' do
    it "cleans a removed clone's certificate from the CA" do
      apply_ok(class_manifest(num_clones: 1))
      # The CA's side only: on a suite with PuppetDB the task would also run
      # `puppet node deactivate`, and the sandbox host's own agent holds no
      # certificate PuppetDB takes.
      answer, result = run_task(task, 'certnames' => [certname('clone2')], 'deactivate' => false,
                                      '_task' => 'clone_army::clean_certs')
      expect(result.exitstatus).to eq(0), result.to_s
      expect(answer).to include('certnames' => { certname('clone2') => { 'ca' => 'cleaned', 'puppetdb' => 'skipped' } },
                                'changed' => true)
      expect(answer['commands']).to eq(["puppetserver ca clean --certname #{certname('clone2')}"])
      expect(ca_certs).not_to include(certname('clone2'))
      expect(signed_certs).not_to include(certname('clone2'))
      expect(ca_certs[certname('clone1')]).to eq(fingerprints[certname('clone1')])
    end

    it 'answers absent for a certname the CA never had, and refuses a bad one before running anything' do
      never = certname('clone99')
      answer, result = run_task(task, 'certnames' => [certname('clone2'), never], 'deactivate' => false)
      expect(result.exitstatus).to eq(0), result.to_s
      expect(answer['certnames'][never]).to eq('ca' => 'absent', 'puppetdb' => 'skipped')
      # Cleaned before: Puppet Server 7 has nothing left for it, 8 revokes it
      # anew from its inventory and says so; either way the CA lists it no more.
      expect(['absent', 'cleaned']).to include(answer.dig('certnames', certname('clone2'), 'ca')), answer.to_s
      expect(ca_certs).not_to include(certname('clone2'))
      answer, result = run_task(task, 'certnames' => ['--all'])
      expect(result.exitstatus).to eq(1), result.to_s
      expect(answer['_error']).to include('kind' => 'clone_army/invalid-parameter')
    end

    it 'forgets the SSL directory on the load host, refusing one a clone uses' do
      refused = on_sandbox(SandboxHarness::HELPER, 'ssl', 'forget', certname('clone1'), timeout: 60)
      expect(refused.exitstatus).not_to eq(0)
      expect(JSON.parse(refused.stdout).dig('error', 'kind')).to eq('invalid-argument')
      forgotten = on_sandbox!(SandboxHarness::HELPER, 'ssl', 'forget', certname('clone2'), timeout: 60)
      expect(JSON.parse(forgotten.stdout)['result']).to eq('forgotten' => [certname('clone2')], 'changed' => true)
      # Earlier files of the suite leave kept directories of their own clones.
      expect(ssl_dirs.keys).to include(certname('clone1'))
      expect(ssl_dirs.keys).not_to include(certname('clone2'))
    end

    it 'has clone2, made again, get a new certificate signed and check in' do
      since = sandbox_now
      apply_ok(class_manifest(num_clones: 2))
      expect_checkins(['clone2'], since)
      fingerprint = ca_certs[certname('clone2')]
      expect(fingerprint).not_to be_nil
      expect(fingerprint).not_to eq(fingerprints[certname('clone2')])
      expect(ssl_dirs[certname('clone2')]).to include('clone' => 'clone2')
    end
  end
end
