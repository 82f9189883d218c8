# frozen_string_literal: true

require 'spec_helper'

describe 'clone_army::workload' do
  let(:node) { 'clone1.loadhost.example.com' }
  let(:facts) { { kernel: 'Linux' } }
  let(:dir) { '/var/tmp/clone_army_workload' }

  def content(title)
    catalogue.resource('File', title)[:content]
  end

  context 'with the defaults' do
    it { is_expected.to compile.with_all_deps }

    it 'manages the directory wholly' do
      is_expected.to contain_file(dir).with(ensure: 'directory', recurse: true, purge: true, force: true)
    end

    it 'declares 10 static and 2 changing files of 1024 bytes' do
      is_expected.to have_file_resource_count(13)
      (1..10).each { |index| expect(content("#{dir}/static_#{index}").bytesize).to eq(1024) }
      (1..2).each { |index| expect(content("#{dir}/changing_#{index}").bytesize).to eq(1024) }
      expect(content("#{dir}/static_3")).to start_with("clone_army workload: static file 3 of 10\n")
    end
  end

  context 'with every parameter' do
    let(:params) { { static_files: 3, changing_files: 4, file_bytes: 32, directory: '/srv/load' } }

    it 'makes that many files of that size, cut short where the text is longer' do
      is_expected.to have_file_resource_count(8)
      expect(content('/srv/load/static_3')).to eq('clone_army workload: static file')
      (1..4).each do |index|
        # The compile time is whole at the front, so the content still changes every run.
        expect(content("/srv/load/changing_#{index}")).to match(%r{\A\d{10}\.\d{9} clone_army \z})
      end
      is_expected.not_to contain_file('/srv/load/static_4')
    end
  end

  context 'with no files' do
    let(:params) { { static_files: 0, changing_files: 0 } }

    it { is_expected.to have_file_resource_count(1) }
  end

  context 'compiled now' do
    # Facts of its own, so rspec-puppet's catalog cache cannot hand back an older compile.
    let(:facts) { { kernel: 'Linux', uncached: true } }

    it 'stamps the changing files with the compile\'s time (new at every run), the static ones not' do
      before = Time.now.utc
      stamp = content("#{dir}/changing_1")[%r{\A(\d+\.\d{9}) clone_army workload: changing file 1\n *\z}, 1]
      expect(stamp).not_to be_nil
      compiled = Time.at(Rational(stamp))
      expect(compiled).to be_between(before - 1, Time.now.utc + 1)
      expect(content("#{dir}/static_1")).not_to include(stamp)
    end
  end

  {
    static_files: -1, changing_files: 10_001, file_bytes: 31, directory: 'tmp/load'
  }.each do |parameter, bad|
    context "with #{parameter} => #{bad.inspect}" do
      let(:params) { { parameter => bad } }

      it { is_expected.to compile.and_raise_error(%r{parameter '#{parameter}'}) }
    end
  end
end
